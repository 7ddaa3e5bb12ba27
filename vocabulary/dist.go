package vocabulary

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"

	nexuscore "github.com/nexus-harness/nexus/third_party/nexus-core"
)

// SourceBuiltin is the Source of the distribution built into nexus.
const SourceBuiltin = "built in"

// Dist is a distribution's files and where nexus found them. Everything
// that reads a distribution reads it through FS, so a directory on disk and
// the copy built into the binary behave the same.
type Dist struct {
	// FS holds the files, rooted at the folder of manifest.json.
	FS fs.FS
	// Dir is that folder on disk (absolute); "" for the built-in copy.
	Dir string
	// Source says how it was chosen: "--core flag", "NEXUS_CORE_DIR",
	// "config core.dir in FILE", "node_modules", or SourceBuiltin.
	Source string
}

// DirDist is the distribution in dir (made absolute), chosen by source.
func DirDist(dir, source string) Dist {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return Dist{FS: os.DirFS(dir), Dir: dir, Source: source}
}

// Builtin is the nexus-core distribution embedded in nexus
// (third_party/nexus-core). Opening it reads nothing: the files are part of
// the binary and are decoded only when asked for.
func Builtin() Dist {
	return Dist{FS: nexuscore.FS(), Source: SourceBuiltin}
}

// BuiltinVersion is the nexus-core version built into nexus.
const BuiltinVersion = nexuscore.Version

// IsBuiltin reports whether d is the embedded copy.
func (d Dist) IsBuiltin() bool { return d.Dir == "" }

// Where names the distribution for people: its directory, or
// "built-in nexus-core 0.10.0".
func (d Dist) Where() string {
	if d.Dir != "" {
		return d.Dir
	}
	return "built-in nexus-core " + BuiltinVersion
}

// File names one of its files (slash-separated, relative) for people: a path
// on disk, or "builtin:nexus-core@0.10.0/<rel>" for the embedded copy (write
// it out with `nexus core extract DIR`).
func (d Dist) File(rel string) string {
	if d.Dir != "" {
		return filepath.Join(d.Dir, filepath.FromSlash(rel))
	}
	return "builtin:nexus-core@" + BuiltinVersion + "/" + path.Clean(rel)
}
