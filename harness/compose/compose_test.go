package compose

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/claude"
	"github.com/nexus-harness/nexus/harness/host/neutral"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/internal/testenv"
)

// newRoot is a Root of a fresh project with the vendored distribution and
// no user file or variables.
func newRoot(t *testing.T, o Options) *Root {
	t.Helper()
	if o.Project == "" {
		o.Project = t.TempDir()
	}
	o.Config = config.Options{NoUserFile: true, IgnoreEnv: true}
	t.Setenv("NEXUS_CORE_DIR", "")
	r := New(o)
	cfgWithCore(t, r)
	return r
}

// cfgWithCore points the root at the vendored distribution.
func cfgWithCore(t *testing.T, r *Root) {
	t.Helper()
	dir := filepath.Join(r.o.Project, ".nexus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nexus.yaml"), []byte("core:\n  dir: "+testenv.CoreDir(t)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestHarness(t *testing.T) {
	tests := []struct {
		name        string
		host        host.Host
		o           HarnessOptions
		memoryTools bool
		profile     string
	}{
		{"hook: memory for the lifecycle only, the host's profile", claude.Host{}, HarnessOptions{}, false, claude.Name},
		{"server: memory tools in the registry, no host", nil, HarnessOptions{MemoryTools: true}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRoot(t, Options{Host: tt.host, LazyCore: tt.host != nil})
			h, err := r.Harness(context.Background(), tt.o)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if h.Memory == nil || h.MemoryErr != nil || h.Lifecycle == nil || h.Engine == nil {
				t.Fatalf("built %+v", h)
			}
			if _, ok := h.Engine.Tool("memory_save"); ok != tt.memoryTools {
				t.Errorf("memory_save registered = %v, want %v", ok, tt.memoryTools)
			}
			if got := r.Profile().Name; got != tt.profile {
				t.Errorf("profile of %q, want %q", got, tt.profile)
			}
		})
	}
}

// The harness id: harness.id when configured, else the host's own, else
// the default.
func TestHarnessID(t *testing.T) {
	idHost := struct{ neutral.Host }{}
	for _, tt := range []struct {
		name string
		yaml string
		h    host.Host
		want string
	}{
		{"default", "", nil, "nexus"},
		{"a host without its own", "", claude.Host{}, "nexus"},
		{"configured", "harness:\n  id: other\n", claude.Host{}, "other"},
		{"a host with its own", "", ownID{idHost, "own"}, "own"},
		{"configured beats the host's", "harness:\n  id: other\n", ownID{idHost, "own"}, "other"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			proj := t.TempDir()
			if tt.yaml != "" {
				if err := os.MkdirAll(filepath.Join(proj, ".nexus"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(proj, config.ProjectFile), []byte(tt.yaml), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := New(Options{Project: proj, Host: tt.h, Config: config.Options{NoUserFile: true, IgnoreEnv: true}})
			l, err := r.Layout("")
			if err != nil || l.HarnessID != tt.want {
				t.Errorf("harness id %q (%v), want %q", l.HarnessID, err, tt.want)
			}
		})
	}
}

type ownID struct {
	host.Host
	id string
}

func (o ownID) HarnessID() string { return o.id }

func TestNexusDir(t *testing.T) {
	proj := t.TempDir()
	file := filepath.Join(proj, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	if d, err := NexusDir(cfg, proj, ""); err != nil || d != filepath.Join(proj, ".nexus") {
		t.Errorf("default: %q, %v; want the project's own", d, err)
	}
	if d, err := NexusDir(cfg, proj, proj); err != nil || d != proj {
		t.Errorf("override: %q, %v", d, err)
	}
	if _, err := NexusDir(cfg, proj, file); err == nil {
		t.Error("a file as the .nexus root was accepted")
	}
}

func TestLayout(t *testing.T) {
	proj := t.TempDir()
	file := filepath.Join(proj, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(proj, "other")
	tests := []struct {
		name, nexusRoot   string
		wantNexus, wantID string
		wantErr           bool
	}{
		{name: "the project's own .nexus", wantNexus: filepath.Join(proj, ".nexus"), wantID: "nexus"},
		{name: "a .nexus root of its own", nexusRoot: other, wantNexus: other, wantID: "nexus"},
		{name: "a file as the .nexus root", nexusRoot: file, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(Options{Project: proj, Config: config.Options{NoUserFile: true, IgnoreEnv: true}})
			l, err := r.Layout(tt.nexusRoot)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && (l.Nexus != tt.wantNexus || l.HarnessID != tt.wantID || l.Project != proj) {
				t.Errorf("layout %s (%s) of %s, want %s (%s)", l.Nexus, l.HarnessID, l.Project, tt.wantNexus, tt.wantID)
			}
		})
	}
}

func TestHookProject(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) string {
		t.Helper()
		p = filepath.Join(root, p)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withNexus := mk("a")
	mk("a/.nexus")
	deep := mk("a/src/pkg")
	withGit := mk("b")
	mk("b/.git")
	gitDeep := mk("b/x")
	bare := mk("c/d") // no marker up to root (t.TempDir has none)
	file := filepath.Join(root, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	claudeDir := mk("claude")
	tests := []struct {
		name        string
		h           host.Host
		claude, dir string
		want        string
	}{
		{"the folder holding .nexus", claude.Host{}, "", deep, withNexus},
		{"the folder holding .git", neutral.Host{}, "", gitDeep, withGit},
		{"a marker in the folder itself", claude.Host{}, "", withNexus, withNexus},
		{"no marker: the folder itself", claude.Host{}, "", bare, bare},
		{"CLAUDE_PROJECT_DIR first", claude.Host{}, claudeDir, deep, claudeDir},
		{"CLAUDE_PROJECT_DIR is Claude Code's only", neutral.Host{}, claudeDir, deep, withNexus},
		{"CLAUDE_PROJECT_DIR that is not a folder", claude.Host{}, file, deep, withNexus},
		{"no working directory", claude.Host{}, "", "", ""},
		{"a relative working directory", claude.Host{}, "", "a/src", ""},
		{"a working directory that is a file", claude.Host{}, "", file, ""},
		{"a working directory that does not exist", claude.Host{}, "", filepath.Join(root, "gone"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == claude.ProjectEnv {
					return tt.claude
				}
				return ""
			}
			if got := HookProject(tt.h, getenv, tt.dir); got != tt.want {
				t.Errorf("HookProject(%s, %q, %q) = %q, want %q", tt.h.Name(), tt.claude, tt.dir, got, tt.want)
			}
		})
	}
}
