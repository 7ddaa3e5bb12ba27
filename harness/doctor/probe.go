package doctor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// What the hosts' checks share to run the nexus a host registered: its
// executable compared with this one and a scratch project to run it in.
// The MCP handshake with a registered server is package mcpprobe's: this
// package is linked into every hook process (through harness/compose),
// mcp-go must not be.

// Runnable says why an executable a host registered cannot run (nil when
// it can): missing, not executable, not on PATH.
func Runnable(exe string) error {
	if !filepath.IsAbs(exe) {
		if _, err := exec.LookPath(exe); err != nil {
			return errors.New("is not found in PATH")
		}
		return nil
	}
	st, err := os.Stat(exe)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.New("does not exist")
	case err != nil:
		return err
	case st.IsDir() || st.Mode().Perm()&0o111 == 0:
		return errors.New("is not an executable file")
	}
	return nil
}

// SameExecutable reports whether two paths name the same file.
func SameExecutable(a, b string) bool {
	if a == b {
		return true
	}
	if !filepath.IsAbs(a) {
		if p, err := exec.LookPath(a); err == nil {
			a = p
		}
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// Scratch makes a scratch project (the caller removes it) and the
// environment to run nexus in it: this process's environment without the
// NEXUS_* variables, XDG_CONFIG_HOME and the variables named in drop, with
// the scratch folder as the user's configuration folder and the gate's
// rules pinned to what a canary expects (unplanned edits denied,
// fail-open), so that the user's project and configuration are never
// touched and never change the answer.
func Scratch(drop ...string) (dir string, env []string, err error) {
	dir, err = os.MkdirTemp("", "nexus-doctor-*")
	if err != nil {
		return "", nil, fmt.Errorf("create a scratch project: %w", err)
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return "", nil, err
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "NEXUS_") || k == "XDG_CONFIG_HOME" || contains(drop, k) {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"))
	env = append(env, CanaryEnv()...)
	return dir, env, nil
}

// CanaryEnv pins the gate's rules to what a canary expects, whatever the
// defaults: unplanned edits denied, fail-open.
func CanaryEnv() []string {
	return []string{"NEXUS_GATE_UNPLANNED_EDIT=deny", "NEXUS_GATE_POLICY=fail-open"}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// InScratch runs cmd in the scratch project dir with env.
func InScratch(cmd *exec.Cmd, dir string, env []string) *exec.Cmd {
	cmd.Dir, cmd.Env = dir, env
	// A child that inherited the output pipe must not keep the doctor waiting.
	cmd.WaitDelay = time.Second
	return cmd
}

// Tail quotes the end of a subprocess's stderr for a finding ("" when it
// said nothing).
func Tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return "; it said: " + Clip(s)
}

// Clip keeps the end of a long text.
func Clip(s string) string {
	const n = 400
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
