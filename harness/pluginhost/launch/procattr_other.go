//go:build !linux

package launch

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcAttr has no parent-death signal outside Linux: there the host's
// signal handling and Manager.Close are what stop plugins.
func setProcAttr(*exec.Cmd) {}

// killTree kills the plugin process.
func killTree(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// terminateTree asks the plugin process to stop (a kill where there are
// no signals).
func terminateTree(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return p.Kill()
	}
	return nil
}
