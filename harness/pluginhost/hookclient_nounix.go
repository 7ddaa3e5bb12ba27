//go:build !unix

package pluginhost

import (
	"os"
	"os/exec"
)

func fileOwner(os.FileInfo) (int, bool) { return 0, false }
func detach(*exec.Cmd)                  {}
func isConnRefused(error) bool          { return false }
