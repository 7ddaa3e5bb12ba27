package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// What the hosts' checks share to run the nexus a host registered: its
// executable compared with this one, a scratch project to run it in, and
// an MCP handshake with a registered server.

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

// MCPAnswer is what a probed MCP server answered.
type MCPAnswer struct {
	Server, Version, Protocol string
	// Tools are the names tools/list gave (when asked).
	Tools []string
	Took  time.Duration
}

// Summary describes the handshake for a finding.
func (a MCPAnswer) Summary() string {
	return fmt.Sprintf("answered initialize (server %s %s, protocol %s)", a.Server, a.Version, a.Protocol)
}

// ProbeMCP starts one MCP server with mcp-go's client, as an MCP host
// would: the initialize handshake (the newest protocol version that still
// has one, what the hosts of today speak) and, with listTools, tools/list.
// An error says which step failed; said is the end of what the server
// wrote on stderr ("" when nothing), for the finding.
func ProbeMCP(ctx context.Context, mk func(context.Context) *exec.Cmd, listTools bool) (ans MCPAnswer, said string, err error) {
	// The server's stderr is copied by exec itself, so once the client is
	// closed (the process waited for) all of it has arrived.
	var stderr lockedBuffer
	tr := transport.NewStdioWithOptions("nexus", nil, nil,
		transport.WithCommandFunc(func(ctx context.Context, _ string, _ []string, _ []string) (*exec.Cmd, error) {
			cmd := mk(ctx)
			cmd.Stderr = &stderr
			return cmd, nil
		}),
		transport.WithCommandLogger(slog.New(slog.DiscardHandler)))
	cl := client.NewClient(tr, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	defer cl.Close()
	saidNow := func() string {
		_ = cl.Close()
		return Tail(stderr.String())
	}
	start := time.Now()
	if err := cl.Start(ctx); err != nil {
		return ans, "", fmt.Errorf("cannot start: %w", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "nexus-doctor", Version: "1"}
	res, err := cl.Initialize(ctx, req)
	if err != nil {
		return ans, saidNow(), fmt.Errorf("did not answer initialize: %w", err)
	}
	ans = MCPAnswer{Server: res.ServerInfo.Name, Version: res.ServerInfo.Version, Protocol: res.ProtocolVersion}
	if listTools {
		list, err := cl.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			return ans, saidNow(), fmt.Errorf("did not answer tools/list: %w", err)
		}
		for _, t := range list.Tools {
			ans.Tools = append(ans.Tools, t.Name)
		}
	}
	ans.Took = time.Since(start)
	return ans, saidNow(), nil
}

// lockedBuffer collects a probed server's stderr (written by the client's
// drain while the probe may read it).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// maxStderr bounds what is kept of a probed server's stderr.
const maxStderr = 64 << 10

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := maxStderr - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
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
