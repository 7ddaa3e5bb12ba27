//go:build !unix

package pluginhost

import (
	"net"
	"os"
	"os/exec"
)

func fileOwner(os.FileInfo) (int, bool) { return 0, false }
func detach(*exec.Cmd)                  {}
func isConnRefused(error) bool          { return false }
func peerIsOwner(*net.UnixConn) bool    { return false } // no hook server without Unix permissions
