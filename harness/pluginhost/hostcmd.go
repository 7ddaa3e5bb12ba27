package pluginhost

import "os/exec"

// HostCommand is the plugin host program (DefaultHostProgram) run with
// args, for a command nexus hands to it whole: `nexus decision` runs as
// `nexus-plugins decision ...`, which links the decision store so that
// nexus does not. The kernel stops it when nexus dies (Linux), as it does
// the plugin host.
func HostCommand(args ...string) (*exec.Cmd, error) {
	prog, err := DefaultHostProgram()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(prog, args...)
	setHostProcAttr(cmd)
	return cmd, nil
}
