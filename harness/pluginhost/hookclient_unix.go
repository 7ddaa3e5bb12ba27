//go:build unix

package pluginhost

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// fileOwner returns the uid owning a file.
func fileOwner(st os.FileInfo) (int, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(s.Uid), true
}

// detach starts the command in a session of its own, so that the hook
// process's host (which may kill the hook's process group when it times
// out) does not take the server with it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

func isConnRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// dialHookServer connects to the hook server's Unix socket with the
// system's calls rather than the net package: the hook process (the front)
// would otherwise link net and initialise it on every hook
// (docs/performance.md, "The hook's own start"). The connect does not
// block: a socket whose listener's backlog is full (EAGAIN) is refused at
// once, as net's dialer refuses it, and the event is handled in-process.
// The descriptor is non-blocking, so the *os.File is served by the
// runtime's poller: deadlines and a Close from another goroutine work as on
// a net.Conn.
func dialHookServer(ctx context.Context, path string) (hookConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "connect", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
