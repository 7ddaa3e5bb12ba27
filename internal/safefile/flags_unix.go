//go:build unix

package safefile

import "syscall"

// openFlags: a FIFO opens without waiting for a writer, a terminal never
// becomes the controlling one.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
