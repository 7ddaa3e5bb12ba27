package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// FullProgram is the program that runs every command the front does not.
const FullProgram = "nexus-full"

// fullProgram finds nexus-full: beside this program (symlinks resolved),
// else on PATH.
func fullProgram() (string, error) {
	exe, err := os.Executable()
	if err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		p := filepath.Join(filepath.Dir(exe), FullProgram)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(FullProgram); err == nil {
		return filepath.Abs(p)
	}
	where := "this program's folder"
	if exe != "" {
		where = filepath.Dir(exe)
	}
	return "", fmt.Errorf("%s is not installed in %s nor on PATH; every command but hook, statusline and version runs in it: install it with nexus (make install, or go install github.com/nexus-harness/nexus/cmd/...@latest)", FullProgram, where)
}

// delegate replaces this process with nexus-full run with args: the same
// process id, standard streams, environment and signals, and no second
// process to wait for. It returns only when that fails, with the exit
// status to leave with.
func delegate(args []string, stderr io.Writer) int {
	prog, err := fullProgram()
	if err == nil {
		err = syscall.Exec(prog, append([]string{prog}, args...), os.Environ())
	}
	fmt.Fprintln(stderr, "nexus:", err)
	return exitFailure
}
