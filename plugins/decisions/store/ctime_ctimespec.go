//go:build darwin || freebsd || netbsd

package store

import "syscall"

// ctimeOf is the inode's change time (see ctime_ctim.go).
func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
