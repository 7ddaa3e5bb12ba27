//go:build !unix

package safefile

// openFlags: no non-blocking open on this platform; the stat before the
// open still refuses what is not a regular file.
const openFlags = 0
