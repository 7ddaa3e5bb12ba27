//go:build unix

package store

import (
	"io/fs"
	"syscall"
)

// statID returns the parts of a file's identity the portable FileInfo
// lacks: device, inode and change time (0 where the platform has none).
func statID(info fs.FileInfo) (dev, ino uint64, ctime int64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino), ctimeOf(st)
	}
	return 0, 0, 0
}
