// Command rssrun runs a command and writes its peak resident set (KiB, from
// wait4's rusage) to a file: rssrun OUT PROGRAM ARGS...
//
// The tests start nexus through it rather than directly: a child forked
// from a large process (a race-enabled test binary) shares that process's
// memory until it execs, and Linux keeps that high-water mark in the
// child's ru_maxrss. Forked from this small program, nexus's own peak is
// what is measured.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: rssrun OUT PROGRAM ARGS...")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "rssrun:", err)
		os.Exit(2)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		_ = os.WriteFile(os.Args[1], []byte(strconv.FormatInt(ru.Maxrss, 10)), 0o644)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
