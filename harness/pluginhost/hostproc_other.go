//go:build !linux

package pluginhost

import "os/exec"

// setHostProcAttr: outside Linux, the host stops at end of its input.
func setHostProcAttr(*exec.Cmd) {}
