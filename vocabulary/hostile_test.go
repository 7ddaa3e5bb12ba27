package vocabulary

import (
	"io/fs"
	"path/filepath"
	"testing"

	sft "github.com/nexus-harness/nexus/internal/safefile/safefiletest"
	"github.com/nexus-harness/nexus/schema"
)

// A distribution found in a project's node_modules is hostile input: its
// files are read only when regular, inside its folder, through
// MaxFileBytes, and its folders are listed through MaxDirEntries.
func TestDirDistRefusesHostileFiles(t *testing.T) {
	for _, k := range sft.Hostile {
		t.Run(string(k), func(t *testing.T) {
			dir := copyCore(t)
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
