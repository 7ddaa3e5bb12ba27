package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"

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
type procRunner struct {
	mu     sync.Mutex // guards cmd.Process against a concurrent Kill
	killed bool
	log    hclog.Logger
	cmd    *exec.Cmd
	stdout io.ReadCloser
	stderr io.ReadCloser
	path   string
	pid    int
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

func newProcRunner(log hclog.Logger, m *pluginhost.Manifest, goPluginEnv []string) (*procRunner, error) {
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
	return &procRunner{log: log, cmd: cmd, stdout: stdout, stderr: stderr, path: exe}, nil
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
	return nil
}

func (r *procRunner) Wait(context.Context) error { return r.cmd.Wait() }

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
func (r *procRunner) Stderr() io.ReadCloser { return r.stderr }
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
	return "The plugin did not complete the handshake. Check that it calls sdk.Serve (or speaks the protocol in docs/plugins.md), that it is built for this machine, and its log lines above."
}

func (r *procRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *procRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
