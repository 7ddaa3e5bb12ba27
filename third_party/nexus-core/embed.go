// Package nexuscore carries the nexus-core 0.10.0 distribution inside the
// nexus binary. It is the last place nexus looks for a distribution (after
// --core, NEXUS_CORE_DIR, core.dir and node_modules), so a fresh install
// works with nothing else on disk. See README.md beside this file.
package nexuscore

import (
	"embed"
	"io/fs"
)

// Version is the nexus-core version of the embedded distribution.
const Version = "0.10.0"

// The all: prefix keeps scripts/.gitkeep: extraction is byte for byte.
//
//go:embed all:dist
var files embed.FS

// FS returns the distribution's files, rooted at the package root (the
// folder holding manifest.json). Nothing is read until a file is opened:
// the data is part of the binary's read-only segment.
func FS() fs.FS {
	sub, err := fs.Sub(files, "dist")
	if err != nil {
		panic(err) // "dist" is a valid path; fs.Sub cannot fail on it
	}
	return sub
}
