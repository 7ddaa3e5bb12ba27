//go:build unix

package pluginhost

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// fileOwner returns the uid owning a file.
func fileOwner(st os.FileInfo) (int, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(s.Uid), true
}

// detach starts the command in a session of its own, so that the hook
// process's host (which may kill the hook's process group when it times
// out) does not take the server with it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

func isConnRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
