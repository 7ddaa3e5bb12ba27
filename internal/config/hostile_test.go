package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/safefile"
	sft "github.com/nexus-harness/nexus/internal/safefile/safefiletest"
)

// The project's nexus.yaml (and the user's config.yaml) is read without
// blocking, only when it is a regular file inside the project, through
// MaxFileBytes.
func TestConfigFilesAreReadSafely(t *testing.T) {
	for _, k := range sft.Hostile {
		t.Run("project/"+string(k), func(t *testing.T) {
			proj := t.TempDir()
			sft.Plant(t, filepath.Join(proj, ProjectFile), k, MaxFileBytes, '#')
			var err error
			sft.Within(t, sft.Deadline, "Load", func() {
				_, err = Load(Options{ProjectDir: proj, UserFile: filepath.Join(t.TempDir(), "none.yaml"), IgnoreEnv: true})
			})
			if !sft.Refused(err) || !strings.Contains(err.Error(), "nexus.yaml") {
				t.Fatalf("want a refusal naming nexus.yaml, got %v", err)
			}
		})
	}
	for _, k := range []sft.Kind{sft.FIFO, sft.DevZero, sft.Sparse} {
		t.Run("user/"+string(k), func(t *testing.T) {
			user := filepath.Join(t.TempDir(), "config.yaml")
			sft.Plant(t, user, k, MaxFileBytes, '#')
			var err error
			sft.Within(t, sft.Deadline, "Load", func() { _, err = Load(Options{UserFile: user, IgnoreEnv: true}) })
			if !sft.Refused(err) {
				t.Fatalf("want a refusal, got %v", err)
			}
		})
	}
	// The boundary: a comment of exactly MaxFileBytes loads, one byte more
	// is refused naming the limit.
	for _, over := range []bool{false, true} {
		proj := t.TempDir()
		kind := sft.AtLimit
		if over {
			kind = sft.OverLimit
		}
		sft.Plant(t, filepath.Join(proj, ProjectFile), kind, MaxFileBytes, '#')
		_, err := Load(Options{ProjectDir: proj, UserFile: filepath.Join(t.TempDir(), "none.yaml"), IgnoreEnv: true})
		var tl *safefile.TooLargeError
		if over != errors.As(err, &tl) || !over && err != nil {
			t.Errorf("over=%v: %v", over, err)
		}
	}
	// A symlink staying inside the project is followed.
	proj := t.TempDir()
	os.MkdirAll(filepath.Join(proj, ".nexus"), 0o755)
	os.WriteFile(filepath.Join(proj, "cfg.yaml"), []byte("gate:\n  policy: fail-closed\n"), 0o644)
	os.Symlink("../cfg.yaml", filepath.Join(proj, ProjectFile))
	c, err := Load(Options{ProjectDir: proj, UserFile: filepath.Join(t.TempDir(), "none.yaml"), IgnoreEnv: true})
	if err != nil || c.String("gate.policy") != "fail-closed" {
		t.Errorf("a symlink inside the project: %v", err)
	}
}
