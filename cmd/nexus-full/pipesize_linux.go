package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe raises the capacity of the pipe f writes to (stdout of nexus
// mcp) to 1 MiB when f is a pipe: an answer of a few megabytes then leaves
// in a few writes instead of one 64 KiB pipe-full per context switch. A
// refusal (a lower fs.pipe-max-size, not a pipe) changes nothing.
func growPipe(f *os.File) {
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, 1<<20)
}
