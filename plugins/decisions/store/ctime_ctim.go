//go:build linux || openbsd || dragonfly || solaris

package store

import "syscall"

// ctimeOf is the inode's change time: every write, rename and chmod sets
// it to now, and no user-space call can set it back (touch -d sets only
// the access and modification times).
func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
