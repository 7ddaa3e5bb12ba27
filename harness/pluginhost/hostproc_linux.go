//go:build linux

package pluginhost

import (
	"os/exec"
	"syscall"
)

// setHostProcAttr makes the kernel stop the plugin host (and, through
// theirs, its plugins) when nexus dies, even by SIGKILL.
func setHostProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
