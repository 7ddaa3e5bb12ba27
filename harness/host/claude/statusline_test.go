package claude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/state"
)

func TestStatusLine(t *testing.T) {
	proj := t.TempDir()
	l, err := state.NewLayout(proj, "nexus")
	if err != nil {
		t.Fatal(err)
	}
	if got := StatusLine(l); !strings.Contains(got, "not set up") {
		t.Errorf("no .nexus: %q", got)
	}
	put := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(filepath.Join(l.HarnessDir(), "x"), "")
	if got := StatusLine(l); got != "nexus" {
		t.Errorf("empty state: %q", got)
	}
	put(filepath.Join(l.HarnessDir(), "active-skill.json"), `{"skill":"nx-plan","mode":"auto","tag":"[plan:auto]"}`)
	put(l.PlanPath(), `{"issues":[{"status":"decided"},{"status":"pending"},{"status":"decided"}]}`)
	put(l.TasksPath(), `{"tasks":[{"status":"completed"},{"status":"pending"}]}`)
	put(l.TrackerPath(), `[{"status":"running"},{"status":"completed"},{"status":"running"}]`)
	if got, want := StatusLine(l), "nexus · nx-plan:auto · plan 2/3 decided · tasks 1/2 done · 2 agents running"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	put(l.TasksPath(), `{not json`)
	if got := StatusLine(l); !strings.Contains(got, "tasks unreadable") {
		t.Errorf("corrupt tasks: %q", got)
	}
}

func TestReadStatusInput(t *testing.T) {
	in, err := ReadStatusInput(strings.NewReader(`{"cwd":"/a/b","workspace":{"current_dir":"/a/b","project_dir":"/a"},"model":{"display_name":"Opus"}}`))
	if err != nil || in.Dir() != "/a" {
		t.Fatalf("%+v %v", in, err)
	}
	if _, err := ReadStatusInput(strings.NewReader("")); err != nil {
		t.Error(err)
	}
	if _, err := ReadStatusInput(strings.NewReader("nope")); err == nil {
		t.Error("non-JSON accepted")
	}
	if _, err := ReadStatusInput(strings.NewReader(strings.Repeat(" ", MaxStatusInput+1))); err == nil {
		t.Error("oversized input accepted")
	}
}
