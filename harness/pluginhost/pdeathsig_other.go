//go:build !linux

package pluginhost

import "os/exec"

// setParentDeathSignal has no equivalent outside Linux: there the host's
// signal handling and Manager.Close are what stop plugins.
func setParentDeathSignal(*exec.Cmd) {}
