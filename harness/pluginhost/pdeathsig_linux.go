//go:build linux

package pluginhost

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the kernel SIGKILL the plugin when the host
// dies, even by SIGKILL, when no cleanup code can run. The signal follows
// the thread that started the child; Go threads live as long as the
// process unless a goroutine exits while locked to one, which nexus never
// does around plugin starts.
func setParentDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
