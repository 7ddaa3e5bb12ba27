//go:build linux

package launch

import (
	"net"
	"os"
	"syscall"
)

// peerIsOwner checks, with SO_PEERCRED, that the connecting process runs as
// this user. The socket's folder already admits nobody else; this is the
// second lock on the door.
func peerIsOwner(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	_ = raw.Control(func(fd uintptr) {
		cred, err := syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
		ok = err == nil && int(cred.Uid) == os.Getuid()
	})
	return ok
}
