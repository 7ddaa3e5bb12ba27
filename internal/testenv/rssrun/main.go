// Command rssrun runs one program and reports, on file descriptor 3, its
// process id ("pid N") and then how it ended ("exit CODE SIGNAL
// MAXRSS_KIB CPU_MICROSECONDS", from wait4's rusage). testenv.RunBounded
// starts children through it.
//
// Why not start them directly: Go starts a child with vfork (CLONE_VM),
// and Linux records the parent's resident high-water mark as the child's
// ru_maxrss when the child calls exec. A race-enabled test binary holding
// megabytes of payloads is larger than the limits the tests check.
// rssrun is a fresh small process, so what its child's ru_maxrss carries
// over is a few MiB of rssrun, not the test.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	status := os.NewFile(3, "status")
	if len(os.Args) < 2 || status == nil {
		fmt.Fprintln(os.Stderr, "usage: rssrun PROGRAM [ARG...] (with a status pipe on fd 3)")
		os.Exit(2)
	}
	// The status pipe is the caller's alone: a child that inherited it,
	// or a daemon that child starts, would keep it open past the end.
	syscall.CloseOnExec(3)
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(status, "error %v\n", err)
		os.Exit(127)
	}
	fmt.Fprintf(status, "pid %d\n", cmd.Process.Pid)
	_ = cmd.Wait() // how it ended is in ProcessState
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	sig := 0
	if ws.Signaled() {
		sig = int(ws.Signal())
	}
	var maxrss, cpu int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		maxrss = ru.Maxrss
		cpu = ru.Utime.Nano()/1000 + ru.Stime.Nano()/1000
	}
	fmt.Fprintf(status, "exit %d %d %d %d\n", ws.ExitStatus(), sig, maxrss, cpu)
}
