package pluginhost

import (
	"path/filepath"
	"strings"
	"testing"

	sft "github.com/nexus-harness/nexus/internal/safefile/safefiletest"
)

// A project plugin folder's manifest is read without blocking, only when
// it is a regular file inside the plugin's folder, through its limit.
func TestManifestReadsRefuseHostileFiles(t *testing.T) {
	for _, k := range sft.Hostile {
		t.Run(string(k), func(t *testing.T) {
			project := t.TempDir()
			file := filepath.Join(ProjectPluginDir(project), "evil", ManifestFile)
			sft.Plant(t, file, k, maxManifestSize, '#')
			var err error
			sft.Within(t, sft.Deadline, "LoadManifest", func() { _, err = LoadManifest(file) })
			if err == nil || !strings.Contains(err.Error(), ManifestFile) {
				t.Errorf("LoadManifest: %v", err)
			}
			var found []*Manifest
			var problems []Problem
			sft.Within(t, sft.Deadline, "Discover", func() { found, problems = Discover(project, "", nil) })
			if len(found) != 0 || len(problems) != 1 {
				t.Errorf("Discover: %d found, problems %v", len(found), problems)
			}
		})
	}
}

// The executable nexus hashes before a start is a regular file within
// MaxExecutableBytes: a manifest naming a FIFO or /dev/zero is refused,
// not hashed forever.
func TestDigestRefusesHostileExecutables(t *testing.T) {
	for _, k := range []sft.Kind{sft.FIFO, sft.DevZero, sft.Folder, sft.Sparse} {
		t.Run(string(k), func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "plugin")
			sft.Plant(t, exe, k, MaxExecutableBytes, 0)
			var err error
			sft.Within(t, sft.Deadline, "FileSHA256", func() { _, err = FileSHA256(exe) })
			if !sft.Refused(err) {
				t.Errorf("FileSHA256: %v", err)
			}
			m := &Manifest{Name: "p", Dir: dir, Executable: "plugin", SHA256: strings.Repeat("a", 64), Source: SourceProject}
			if k == sft.DevZero {
				// An absolute executable names its file outright.
				m.Executable = "/dev/zero"
			}
			sft.Within(t, sft.Deadline, "CheckDigest", func() { _, err = CheckDigest(m, nil) })
			if err == nil {
				t.Error("CheckDigest accepted it")
			}
		})
	}
}
