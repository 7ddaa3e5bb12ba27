//go:build !unix

package pluginhost

import (
	"context"
	"net"
	"os"
	"os/exec"
)

func fileOwner(os.FileInfo) (int, bool) { return 0, false }
func detach(*exec.Cmd)                  {}
func isConnRefused(error) bool          { return false }

func dialHookServer(ctx context.Context, path string) (hookConn, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, hookAckTimeout)
	defer cancel()
	return d.DialContext(dctx, "unix", path)
}
