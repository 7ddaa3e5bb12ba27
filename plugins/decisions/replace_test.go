package decisions

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
	"github.com/nexus-harness/nexus/plugins/decisions/store"
)

// maxNotice is the longest a replaced store folder may go unnoticed
// (issue 22: answers are right within 2 s).
const maxNotice = 2 * time.Second

// TestReplacedStoreFolder (issue 22): while the plugin runs, its store
// folder is replaced under the same path. list, check and propose answer
// from the new folder, and propose writes into it (never into the old one,
// moved aside); a removed folder is reported as no store, and nothing is
// written. The time from the replacement to the first right answer is
// logged and bounded by maxNotice.
func TestReplacedStoreFolder(t *testing.T) {
	marker := "---\ndate: 2026-04-16\nconfidence: high\n---\n\n# 900 \u2014 Replacement marker for the new folder\n\n## Decision\n\nOnly the new folder holds this decision.\n"
	for _, tc := range []struct {
		name    string
		replace func(t *testing.T, dir string) // leaves the marker decision in the new folder, if any
		gone    bool                           // no folder afterwards
	}{
		{"moved away and copied back", func(t *testing.T, dir string) {
			if err := os.Rename(dir, dir+".bak"); err != nil {
				t.Fatal(err)
			}
			copyTree(t, dir+".bak", dir)
			os.WriteFile(filepath.Join(dir, "decisions", "900-replacement-marker.md"), []byte(marker), 0o644)
		}, false},
		{"removed and created again", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := store.Scaffold(dir, "Ledgerly", testNow, decision.Documented); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "decisions", "900-replacement-marker.md"), []byte(marker), 0o644)
		}, false},
		{"removed", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, old := newProject(t, "documented")
			dir := old.Root()
			old.Close()
			// Warm: the cache is built and the folder watched.
			if res := call(t, p, decisionsapi.ToolListDecisions, `{"limit":100}`); !strings.Contains(res.Text, "Decisions (55 total)") {
				t.Fatalf("before: %s", res.Text)
			}
			tc.replace(t, dir)
			// Calls until list answers from the new folder (or says there
			// is none): the time from the replacement to that answer.
			right := func(text string) bool {
				if tc.gone {
					return strings.Contains(text, "No decision store found")
				}
				return strings.Contains(text, "D900")
			}
			start := time.Now()
			list := call(t, p, decisionsapi.ToolListDecisions, `{"limit":100}`)
			calls := 1
			for !right(list.Text) && time.Since(start) < maxNotice {
				time.Sleep(10 * time.Millisecond)
				list = call(t, p, decisionsapi.ToolListDecisions, `{"limit":100}`)
				calls++
			}
			noticed := time.Since(start)
			t.Logf("replaced store folder noticed %v after the replacement (call %d)", noticed.Round(time.Microsecond), calls)
			if !right(list.Text) {
				t.Errorf("not noticed within %v", maxNotice)
			}
			check := call(t, p, decisionsapi.ToolCheckDecision, `{"proposed_approach":"Replacement marker for the new folder"}`)
			propose := call(t, p, decisionsapi.ToolProposeDecision, `{"title":"Adopt Mermaid for diagrams","rationale":"Diagrams live beside the prose as Mermaid markup so reviewers see changes."}`)
			if tc.gone {
				for _, res := range []string{list.Text, check.Text, propose.Text} {
					if !strings.Contains(res, "No decision store found") {
						t.Errorf("with the folder gone: %s", res)
					}
				}
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("the removed folder came back: %v", err)
				}
				return
			}
			if !strings.Contains(list.Text, "D900") || !strings.Contains(list.Text, "Replacement marker") ||
				(tc.name == "moved away and copied back") != strings.Contains(list.Text, "Decisions (56 total)") {
				t.Errorf("list answers from the old folder:\n%s", list.Text)
			}
			if !strings.Contains(check.Text, "D900") {
				t.Errorf("check answers from the old folder:\n%s", check.Text)
			}
			if !strings.Contains(propose.Text, `"status": "confirmed"`) {
				t.Fatalf("propose: %s", propose.Text)
			}
			matches, _ := filepath.Glob(filepath.Join(dir, "decisions", "*-adopt-mermaid-for-diagrams.md"))
			if len(matches) != 1 {
				t.Errorf("the proposal is not in the new folder: %v", matches)
			}
			if old, _ := filepath.Glob(filepath.Join(dir+".bak", "decisions", "*-adopt-mermaid-*")); len(old) != 0 {
				t.Errorf("the proposal went into the old folder: %v", old)
			}
		})
	}
}

// TestReplacedFolderInUse: a call that holds the old folder when it is
// replaced finishes on it; the old store is closed once no call holds it.
func TestReplacedFolderInUse(t *testing.T) {
	p, _, old := newProject(t, "documented")
	dir := old.Root()
	old.Close()
	held, err := p.locate(target{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, dir+".bak"); err != nil {
		t.Fatal(err)
	}
	copyTree(t, dir+".bak", dir)
	if res := call(t, p, decisionsapi.ToolListDecisions, `{}`); !strings.Contains(res.Text, "Decisions (20 total)") {
		t.Fatalf("after the replacement: %s", res.Text)
	}
	// The held call still reads its folder (now dir.bak) ...
	if stems, err := held.fs.ListDecisions(); err != nil || len(stems) != 62 {
		t.Fatalf("the held store: %d stems, %v", len(stems), err)
	}
	held.release()
	// ... and once released it is closed.
	if _, err := held.fs.ListDecisions(); err == nil {
		t.Error("the replaced store is still open after its last call")
	}
	held.release() // a second release is harmless
	if res := call(t, p, decisionsapi.ToolListDecisions, `{}`); !strings.Contains(res.Text, "Decisions (20 total)") {
		t.Fatalf("after the release: %s", res.Text)
	}
}

// copyTree copies the folder from to to as `cp -r` does: new folders and
// files (new inodes), the same bytes. (The store's tests import nothing of
// nexus's internal packages.)
func copyTree(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
