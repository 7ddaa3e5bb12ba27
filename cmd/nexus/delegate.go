package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/nexus-harness/nexus/cmd/internal/hot"
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
// process to wait for. stdin, when not nil, is what was read of standard
// input already: nexus-full reads it instead (an unlinked temporary file
// becomes its standard input). The front's build goes along
// (hot.FrontBuildEnv): nexus-full of another build refuses to run. It returns only when that fails, with the
// exit status to leave with.
func delegate(args []string, stdin []byte, stderr io.Writer) int {
	prog, err := fullProgram()
	if err == nil && stdin != nil {
		err = stdinFrom(stdin)
	}
	if err == nil {
		env := append(os.Environ(), hot.FrontBuildEnv+"="+hot.BuildID(version))
		err = syscall.Exec(prog, append([]string{prog}, args...), env)
	}
	fmt.Fprintln(stderr, "nexus:", err)
	return exitFailure
}

// stdinFrom makes data this process's standard input: an unlinked
// temporary file holding it, read from its start.
func stdinFrom(data []byte) error {
	f, err := os.CreateTemp("", "nexus-stdin-")
	if err != nil {
		return fmt.Errorf("keep standard input for nexus-full: %w", err)
	}
	defer f.Close()
	os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("keep standard input for nexus-full: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("keep standard input for nexus-full: %w", err)
	}
	if err := unix.Dup2(int(f.Fd()), 0); err != nil {
		return fmt.Errorf("keep standard input for nexus-full: %w", err)
	}
	return nil
}
