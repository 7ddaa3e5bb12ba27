package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// export lists every decision, newest first, with its supersession links
// and the store's folder; a file that does not parse is a problem, not a
// missing row nor a failure.
func TestExport(t *testing.T) {
	e := newEnv(t)
	storeDir := seed(t, e)
	for _, args := range [][]string{
		{"propose", "--title", "Adopt Mermaid for diagrams", "--rationale", "Diagrams live beside the prose as Mermaid markup."},
		{"propose", "--operation", "supersede", "--affected", "decision-063", "--title", "Adopt D2 for diagrams", "--rationale", "D2 lays out large diagrams better than Mermaid does."},
	} {
		if out, _, err := e.run(t, "", args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(storeDir, "decisions", "900-broken.md"), []byte("not a decision"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := e.run(t, "", "export")
	if err != nil {
		t.Fatal(err)
	}
	var got Export
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Store != storeDir {
		t.Errorf("store %q, want %q", got.Store, storeDir)
	}
	if len(got.Decisions) < 3 || got.Decisions[0].Number != 64 || got.Decisions[1].Number != 63 {
		t.Fatalf("decisions not newest first: %+v", got.Decisions[:min(3, len(got.Decisions))])
	}
	d64, d63 := got.Decisions[0], got.Decisions[1]
	if d64.Supersedes != "63" || d64.Status != "active" || d64.File != "decisions/064-adopt-d2-for-diagrams.md" {
		t.Errorf("superseding decision: %+v", d64)
	}
	if d63.SupersededBy != "64" || d63.Status != "superseded" {
		t.Errorf("superseded decision: %+v", d63)
	}
	if len(got.Problems) != 1 || got.Problems[0].File != "decisions/900-broken.md" {
		t.Errorf("problems: %+v", got.Problems)
	}
}
