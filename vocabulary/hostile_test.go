package vocabulary

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	sft "github.com/nexus-harness/nexus/internal/safefile/safefiletest"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

// A distribution found in a project's node_modules is hostile input: its
// files are read only when regular, inside its folder, through
// MaxFileBytes, and its folders are listed through MaxDirEntries.
func TestDirDistRefusesHostileFiles(t *testing.T) {
	for _, k := range sft.Hostile {
		t.Run(string(k), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "nexus-core")
			copyDir(t, testenv.CoreDir(t), dir)
			sft.Plant(t, filepath.Join(dir, "manifest.json"), k, MaxFileBytes, ' ')
			var err error
			sft.Within(t, sft.Deadline, "OpenManifest", func() { _, err = OpenManifest(dir) })
			if err == nil {
				t.Errorf("OpenManifest accepted a %s manifest", k)
			}
			var findings []Finding
			sft.Within(t, sft.Deadline, "Load", func() { _, findings = Load(dir, schema.NewCoreSet(dir)) })
			if len(findings) == 0 {
				t.Errorf("Load found nothing wrong with a %s manifest", k)
			}
			d := DirDist(dir, "test")
			sft.Within(t, sft.Deadline, "ReadFile", func() { _, err = fs.ReadFile(d.FS, "manifest.json") })
			if !sft.Refused(err) {
				t.Errorf("fs.ReadFile: %v", err)
			}
		})
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
