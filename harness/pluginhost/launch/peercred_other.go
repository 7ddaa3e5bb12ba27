//go:build !linux

package launch

import (
	"net"
	"runtime"
)

// peerIsOwner relies on the socket's private folder where SO_PEERCRED is
// not available (Windows has no such folder: no hook server there).
func peerIsOwner(*net.UnixConn) bool { return runtime.GOOS != "windows" }
