package harness_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/config"
	"github.com/nexus-harness/nexus/internal/testenv"
)

func TestAssemble(t *testing.T) {
	tests := []struct {
		name        string
		setup       harness.Setup
		memoryTools bool
	}{
		{"hook: memory for the lifecycle only, policy on first need", harness.Setup{Host: "claude", MemoryPolicyOnNeed: true}, false},
		{"server: memory tools in the registry", harness.Setup{MemoryTools: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configured := false
			s := tt.setup
			s.Engine = harness.Options{Project: t.TempDir(), CoreDir: testenv.CoreDir(t)}
			s.Configure = func(o *lifecycle.Options) {
				configured = o.Store != nil && o.Memory != nil && o.Host == tt.setup.Host
			}
			h, err := harness.Assemble(s)
			if err != nil {
				t.Fatal(err)
			}
			if h.Memory == nil || h.MemoryErr != nil || h.Lifecycle == nil || h.Engine == nil {
				t.Fatalf("assembled %+v", h)
			}
			if !configured {
				t.Error("Configure did not see the lifecycle options with store, memory and host")
			}
			if _, ok := h.Engine.Tool("memory_save"); ok != tt.memoryTools {
				t.Errorf("memory_save registered = %v, want %v", ok, tt.memoryTools)
			}
		})
	}
}

func TestNexusDir(t *testing.T) {
	proj := t.TempDir()
	file := filepath.Join(proj, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	if d, err := harness.NexusDir(cfg, proj, ""); err != nil || d != "" {
		t.Errorf("default: %q, %v; want the project's own (\"\")", d, err)
	}
	if d, err := harness.NexusDir(cfg, proj, proj); err != nil || d != proj {
		t.Errorf("override: %q, %v", d, err)
	}
	if _, err := harness.NexusDir(cfg, proj, file); err == nil {
		t.Error("a file as the .nexus root was accepted")
	}
}

func TestProjectLayout(t *testing.T) {
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
			l, err := harness.ProjectLayout(config.Defaults(), proj, tt.nexusRoot)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && (l.Nexus != tt.wantNexus || l.HarnessID != tt.wantID || l.Project != proj) {
				t.Errorf("layout %s (%s) of %s, want %s (%s)", l.Nexus, l.HarnessID, l.Project, tt.wantNexus, tt.wantID)
			}
		})
	}
}
