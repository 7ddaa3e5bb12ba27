//go:build linux

package launch

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the plugin in its own process group, so that killing it
// also kills anything it started (a script's children hold its pipes open),
// and makes the kernel SIGKILL it when the host dies, even by SIGKILL,
// when no cleanup code can run. The parent-death signal follows the thread
// that started the child; Go threads live as long as the process unless a
// goroutine exits while locked to one, which nexus never does.
func setProcAttr(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if parentDeathSignal {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
}

// parentDeathSignal is switched off only by tests that check the other
// shutdown paths on their own.
var parentDeathSignal = true

// killTree kills the plugin's process group.
func killTree(pid int) error {
	return syscall.Kill(-pid, syscall.SIGKILL)
}

// terminateTree asks the plugin's process group to stop.
func terminateTree(pid int) error {
	return syscall.Kill(-pid, syscall.SIGTERM)
}
