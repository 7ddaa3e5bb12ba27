package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/nexus-harness/nexus/harness/pluginhost"
)

// procRunner starts a plugin process for go-plugin. nexus uses its own
// runner instead of go-plugin's default so that the child
//   - gets an empty stdin (go-plugin's default hands it the host's stdin,
//     which is the MCP channel or the hook's input),
//   - gets only the environment its manifest allows,
//   - runs in its plugin folder,
//   - runs in its own process group, killed as a whole,
//   - dies with the host (parent-death signal on Linux).
//
// It also reads the child's stderr itself (go-plugin gets an empty stream):
// every line goes to the plugin's log at the level it carries, and the last
// lines are kept for the error that reports a failed start or a crash.
type procRunner struct {
	mu      sync.Mutex // guards cmd.Process against a concurrent Kill
	killed  bool
	log     hclog.Logger
	cmd     *exec.Cmd
	stdout  io.ReadCloser
	stderr  io.ReadCloser
	sink    *lineSink
	tail    *lineTail
	pumped  chan struct{} // closed when stderr has been read to its end
	waited  chan struct{} // closed when the process has been reaped
	exitErr error         // what Wait returned
	path    string
	pid     int
}

var _ runner.Runner = (*procRunner)(nil)

// baseEnv are the host variables every plugin receives when they are set.
var baseEnv = []string{"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ"}

// pluginEnv builds the child's environment: the allowed host variables,
// then go-plugin's own (handshake cookie, protocol versions, socket folder)
// and the TLS identity nexus issued.
func pluginEnv(m *pluginhost.Manifest, goPluginEnv []string) []string {
	var env []string
	seen := map[string]bool{}
	for _, list := range [][]string{baseEnv, m.Env} {
		for _, k := range list {
			if seen[k] {
				continue
			}
			seen[k] = true
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	return append(env, goPluginEnv...)
}

// newProcRunner prepares the child; sink receives its stderr lines, which
// tail also keeps.
func newProcRunner(log hclog.Logger, sink *lineSink, tail *lineTail, m *pluginhost.Manifest, goPluginEnv []string) (*procRunner, error) {
	exe := m.ExecutablePath()
	cmd := exec.Command(exe, m.Args...)
	cmd.Dir = m.Dir
	cmd.Env = pluginEnv(m, goPluginEnv)
	cmd.Stdin = nil // /dev/null
	setProcAttr(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	return &procRunner{log: log, cmd: cmd, stdout: stdout, stderr: stderr, sink: sink, tail: tail,
		pumped: make(chan struct{}), waited: make(chan struct{}), path: exe}, nil
}

func (r *procRunner) Start(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.killed {
		return errors.New("plugin start cancelled: nexus is shutting down")
	}
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", r.path, err)
	}
	r.pid = r.cmd.Process.Pid
	r.log.Debug("plugin process started", "path", r.path, "pid", r.pid)
	go func() {
		defer close(r.pumped)
		r.sink.pump(r.stderr)
	}()
	return nil
}

// Wait reaps the process once its stderr has been read to the end (os/exec
// closes the pipe in Wait, which would lose the last lines).
func (r *procRunner) Wait(context.Context) error {
	<-r.pumped
	err := r.cmd.Wait()
	r.mu.Lock()
	r.exitErr = err
	r.mu.Unlock()
	close(r.waited)
	return err
}

// hasExited reports whether the process has been reaped.
func (r *procRunner) hasExited() bool {
	select {
	case <-r.waited:
		return true
	default:
		return false
	}
}

// exitStatus waits up to d for the process to be reaped and says how it
// ended: "exited with status 3", "was killed", "is still running".
func (r *procRunner) exitStatus(d time.Duration) string {
	select {
	case <-r.waited:
	case <-time.After(d):
		return "is still running"
	}
	r.mu.Lock()
	err, killed := r.exitErr, r.killed
	r.mu.Unlock()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exited with status 0"
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	case killed:
		return "was killed by nexus"
	case errors.As(err, &ee):
		return "was killed (" + ee.String() + ")"
	default:
		return "ended: " + err.Error()
	}
}

// terminate asks the plugin's process group to stop (SIGTERM).
func (r *procRunner) terminate() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd.Process != nil && !r.killed {
		_ = terminateTree(r.pid)
	}
}

func (r *procRunner) Kill(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.killed = true
	if r.cmd.Process == nil {
		return nil
	}
	_ = killTree(r.pid)
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func (r *procRunner) Stdout() io.ReadCloser { return r.stdout }

// Stderr is empty for go-plugin: the runner reads the real stream itself.
func (r *procRunner) Stderr() io.ReadCloser { return io.NopCloser(strings.NewReader("")) }
func (r *procRunner) Name() string          { return r.path }

func (r *procRunner) ID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pid == 0 {
		return ""
	}
	return strconv.Itoa(r.pid)
}

func (r *procRunner) Diagnose(context.Context) string {
	return "The plugin did not complete the handshake. Check that it calls pluginserver.Serve (or speaks the protocol in docs/plugins.md), that it is built for this machine, and its log lines above."
}

func (r *procRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *procRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
