package vocabulary

import (
	"bytes"
	"io/fs"
	"path"
	"path/filepath"

	"github.com/nexus-harness/nexus/internal/safefile"
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

// Limits on a distribution read from disk: one found in a project's
// node_modules is as hostile as the project. Each file is read only when it
// is a regular file inside the distribution's folder (a symlink is
// followed while it stays inside), through MaxFileBytes; a folder lists at
// most MaxDirEntries entries; names go at most MaxDepth folders deep.
// nexus-core 0.10.0 has 90 files, the largest 47 KB, at most 14 in a
// folder and 4 levels deep.
const (
	MaxFileBytes  = 4 << 20
	MaxDirEntries = 10000
	MaxDepth      = 16
)

// DirDist is the distribution in dir (made absolute), chosen by source.
func DirDist(dir, source string) Dist {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	fsys := safefile.DirFS(dir, safefile.FSLimits{File: MaxFileBytes, Entries: MaxDirEntries, Depth: MaxDepth})
	return Dist{FS: fsys, Dir: dir, Source: source}
}

// Builtin is the nexus-core distribution embedded in nexus
// (third_party/nexus-core). Opening it reads nothing: the files are part of
// the binary and are decoded only when asked for.
func Builtin() Dist {
	return Dist{FS: nexuscore.FS(), Source: SourceBuiltin}
}

// BuiltinFile reports whether raw is, byte for byte, the file at rel of
// the distribution built into nexus: a schema that is one of its files is
// known valid against its metaschema (TestBuiltinSchemasAreValid), so
// schema.NewCoreSetKnown need not check it again in every process.
func BuiltinFile(rel string, raw []byte) bool {
	b, err := fs.ReadFile(nexuscore.FS(), rel)
	return err == nil && bytes.Equal(b, raw)
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
