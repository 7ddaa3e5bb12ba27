//go:build !unix

package store

import "io/fs"

func devIno(fs.FileInfo) (uint64, uint64) { return 0, 0 }
