package compose

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/host/claude"
	"github.com/nexus-harness/nexus/internal/config"
)

// rootWithFile is a Root of a project whose .nexus/nexus.yaml holds yaml,
// with a user file setting log.level, and no variables.
func rootWithFile(t *testing.T, proj, yaml string, keepGoing bool, warn func(*config.Error)) *Root {
	t.Helper()
	os.MkdirAll(filepath.Join(proj, ".nexus"), 0o755)
	if err := os.WriteFile(filepath.Join(proj, ".nexus", "nexus.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(t.TempDir(), "user.yaml")
	os.WriteFile(user, []byte("log:\n  level: debug\n"), 0o644)
	return New(Options{Project: proj, Config: config.Options{UserFile: user, IgnoreEnv: true}, KeepGoing: keepGoing, Warn: warn, Host: claude.Host{}})
}

// TestConfigProblemsByDoor: a key's problem is a warning for every door
// (Warn, ConfigProblems) and the rest applies; a file that cannot be
// parsed is the error of a command's Config, while the host's doors
// (KeepGoing) go on with the other layers.
func TestConfigProblemsByDoor(t *testing.T) {
	var warned []string
	warn := func(e *config.Error) { warned = append(warned, e.Text()) }
	r := rootWithFile(t, t.TempDir(), "gate:\n  unplaned_edit: warn\nharness:\n  id: mine\n", false, warn)
	cfg, err := r.Config()
	if err != nil || cfg.String("harness.id") != "mine" || len(r.ConfigProblems()) != 1 || len(warned) != 1 || !strings.Contains(warned[0], "gate.unplaned_edit") {
		t.Fatalf("a typo: %v, problems %v, warned %v", err, r.ConfigProblems(), warned)
	}

	warned = nil
	r = rootWithFile(t, t.TempDir(), "gate: [\n", false, warn)
	var ce *config.Error
	if _, err := r.Config(); !errors.As(err, &ce) || !ce.Broken() || len(warned) != 0 {
		t.Fatalf("a command on a broken file: %v (warned %v)", err, warned)
	}
	if r.Loaded() == nil || r.Loaded().String("log.level") != "debug" {
		t.Errorf("Loaded must hold the layers that load")
	}

	r = rootWithFile(t, t.TempDir(), "gate: [\n", true, warn)
	cfg, err = r.Config()
	if err != nil || cfg.String("log.level") != "debug" || len(r.ConfigProblems()) != 1 || len(warned) != 1 {
		t.Fatalf("a host's door on a broken file: %v, problems %v, warned %v", err, r.ConfigProblems(), warned)
	}
	if _, err := r.Harness(context.Background(), HarnessOptions{}); err != nil {
		t.Errorf("a host's door builds its harness without the broken file: %v", err)
	}
}

// TestConfigNoticeIdentity: the notice's identity changes when a
// configuration file does, so the session is told again.
func TestConfigNoticeIdentity(t *testing.T) {
	proj := t.TempDir()
	n1 := rootWithFile(t, proj, "gate:\n  unplaned_edit: warn\n", true, nil)
	if _, err := n1.Config(); err != nil {
		t.Fatal(err)
	}
	a := n1.configNotice()
	if len(a.Problems) != 1 || a.Identity == "" {
		t.Fatalf("notice %+v", a)
	}
	same := New(n1.o)
	same.Config()
	if b := same.configNotice(); b.Identity != a.Identity {
		t.Errorf("identity changed without a change")
	}
	time.Sleep(10 * time.Millisecond)
	changed := rootWithFile(t, proj, "gate:\n  unplaned_edit: warn\n# a comment\n", true, nil)
	changed.Config()
	if c := changed.configNotice(); c.Identity == a.Identity || len(c.Problems) != 1 {
		t.Errorf("the file changed, the identity did not: %+v", c)
	}
	clean := rootWithFile(t, t.TempDir(), "harness:\n  id: x\n", true, nil)
	clean.Config()
	if n := clean.configNotice(); len(n.Problems) != 0 || n.Identity != "" {
		t.Errorf("no problems: %+v", n)
	}
}
