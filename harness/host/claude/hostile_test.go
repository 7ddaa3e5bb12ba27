package claude

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/internal/jsonscan"
	"github.com/nexus-harness/nexus/internal/safefile"
	sft "github.com/nexus-harness/nexus/internal/safefile/safefiletest"
	"github.com/nexus-harness/nexus/internal/state"
)

// Every file install, uninstall, Inspect (nexus doctor), the owned-file
// check and the status line read is refused, fast and by name, when a
// repository ships a FIFO, a device link, a folder or a giant in its place.
func TestReadsRefuseHostileFiles(t *testing.T) {
	for _, f := range []struct {
		rel   string
		limit int64
	}{
		{".claude/settings.json", install.MaxSettings},
		{".mcp.json", install.MaxSettings},
		{".claude/" + install.RecordName, install.MaxRecord},
		{".claude/agents/architect.md", install.MaxOwnedFile},
	} {
		for _, k := range sft.Hostile {
			t.Run(f.rel+"/"+string(k), func(t *testing.T) {
				proj := t.TempDir()
				p := filepath.Join(proj, filepath.FromSlash(f.rel))
				sft.Plant(t, p, k, f.limit, ' ')
				o := testInstallOptions()
				o.Scope, o.Project, o.Files = ScopeProject, proj, ownedFiles("1")
				for _, op := range []struct {
					name string
					run  func() error
				}{
					{"install", func() error { _, err := Install(o); return err }},
					{"uninstall", func() error { _, err := Uninstall(o); return err }},
					{"inspect", func() error {
						r, err := Inspect(o)
						if err == nil && r != nil && len(r.Unreadable) > 0 {
							return errors.New(strings.Join(r.Unreadable, "; "))
						}
						return err
					}},
					{"check owned", func() error { _, err := CheckOwned(filepath.Join(proj, ".claude"), o.Files); return err }},
				} {
					if op.name == "inspect" && !strings.HasSuffix(f.rel, ".json") || op.name == "inspect" && strings.Contains(f.rel, install.RecordName) {
						continue // Inspect reads the two settings files only
					}
					if op.name == "check owned" && !strings.Contains(f.rel, "agents") && !strings.Contains(f.rel, install.RecordName) {
						continue
					}
					var err error
					sft.Within(t, sft.Deadline, op.name, func() { err = op.run() })
					if op.name == "uninstall" && strings.Contains(f.rel, "agents") && err == nil {
						continue // no record: nothing of nexus's to remove, nothing read
					}
					var se *install.SymlinkError
					if !sft.Refused(err) && !errors.As(err, &se) {
						t.Errorf("%s: want a refusal, got %v", op.name, err)
						continue
					}
					if !strings.Contains(err.Error(), filepath.Base(p)) {
						t.Errorf("%s: the refusal does not name %s: %v", op.name, p, err)
					}
				}
			})
		}
	}
}

// A settings or MCP file nested deeper than jsonscan.MaxDepth is refused
// by name before it is decoded, and left as it is: a 20 KB .mcp.json
// nested 10,000 deep took install 1.6 GB and was rewritten as 200 MB.
func TestInstallRefusesDeepJSON(t *testing.T) {
	for _, rel := range []string{".claude/settings.json", ".mcp.json"} {
		proj := t.TempDir()
		p := filepath.Join(proj, filepath.FromSlash(rel))
		deep := `{"a":` + strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000) + "}"
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(deep), 0o644); err != nil {
			t.Fatal(err)
		}
		o := testInstallOptions()
		o.Scope, o.Project, o.Files = ScopeProject, proj, ownedFiles("1")
		var err error
		sft.Within(t, sft.Deadline, "install", func() { _, err = Install(o) })
		limit := (&jsonscan.DepthError{Limit: jsonscan.MaxDepth}).Error()
		if err == nil || !strings.Contains(err.Error(), limit) || !strings.Contains(err.Error(), filepath.Base(p)) {
			t.Errorf("%s: want a depth refusal naming the file, got %v", rel, err)
		}
		if b, _ := os.ReadFile(p); string(b) != deep {
			t.Errorf("%s was changed (%d bytes)", rel, len(b))
		}
	}
}

// At its limit a settings file is read; one byte more is refused.
func TestSettingsLimitBoundary(t *testing.T) {
	for _, over := range []bool{false, true} {
		proj := t.TempDir()
		p := filepath.Join(proj, ".claude", "settings.json")
		k := sft.AtLimit
		if over {
			k = sft.OverLimit
		}
		sft.Plant(t, p, k, install.MaxSettings, ' ')
		_, err := Inspect(InstallOptions{Scope: ScopeProject, Project: proj})
		var tl *safefile.TooLargeError
		if over != errors.As(err, &tl) || !over && err != nil {
			t.Errorf("over=%v: %v", over, err)
		}
	}
}

func TestStatusLineOfHostileState(t *testing.T) {
	for _, k := range sft.Hostile {
		l, err := state.NewLayout(t.TempDir(), "nexus")
		if err != nil {
			t.Fatal(err)
		}
		sft.Plant(t, l.TasksPath(), k, maxStatusFile, ' ')
		sft.Plant(t, l.PlanPath(), k, maxStatusFile, ' ')
		var line string
		sft.Within(t, sft.Deadline, "StatusLine", func() { line = StatusLine(l) })
		if !strings.Contains(line, "plan unreadable") || !strings.Contains(line, "tasks unreadable") {
			t.Errorf("%s: %q", k, line)
		}
	}
}

func TestTranscriptIsNeverAFIFO(t *testing.T) {
	for _, k := range []sft.Kind{sft.FIFO, sft.DevZero, sft.Folder} {
		p := filepath.Join(t.TempDir(), "t.jsonl")
		sft.Plant(t, p, k, 0, 0)
		var ok bool
		sft.Within(t, sft.Deadline, "lastAssistantText", func() { _, ok = lastAssistantText(p) })
		if ok {
			t.Errorf("%s: read as a transcript", k)
		}
	}
}
