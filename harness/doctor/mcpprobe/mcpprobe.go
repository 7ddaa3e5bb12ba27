// Package mcpprobe is the doctor's MCP handshake with a server a host
// registered, with mark3labs/mcp-go's client. It is a package of its own,
// imported by the hosts' setup packages only, so that a hook process
// (which links harness/doctor through harness/compose) does not link
// mcp-go and its JSON Schema library.
package mcpprobe

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/nexus-harness/nexus/harness/doctor"
)

// Answer is what a probed MCP server answered.
type Answer struct {
	Server, Version, Protocol string
	// Tools are the names tools/list gave (when asked).
	Tools []string
	Took  time.Duration
}

// Summary describes the handshake for a finding.
func (a Answer) Summary() string {
	return fmt.Sprintf("answered initialize (server %s %s, protocol %s)", a.Server, a.Version, a.Protocol)
}

// Probe starts one MCP server with mcp-go's client, as an MCP host
// would: the initialize handshake (the newest protocol version that still
// has one, what the hosts of today speak) and, with listTools, tools/list.
// An error says which step failed; said is the end of what the server
// wrote on stderr ("" when nothing), for the finding.
func Probe(ctx context.Context, mk func(context.Context) *exec.Cmd, listTools bool) (ans Answer, said string, err error) {
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
		return doctor.Tail(stderr.String())
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
	ans = Answer{Server: res.ServerInfo.Name, Version: res.ServerInfo.Version, Protocol: res.ProtocolVersion}
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

// Server is one MCP server a host's doctor probes, started as the host
// would start it.
type Server struct {
	// What names the server in the finding.
	What string
	// Cmd makes the server's process (the registered command, in the
	// host's environment, in a scratch project).
	Cmd func(context.Context) *exec.Cmd
	// Want is a tool tools/list must offer (the decision store's); ""
	// probes the handshake only.
	Want string
	// Fix is the finding's fix when the server fails.
	Fix string
}

// Wording is what a host's findings add to the shared judgement.
type Wording struct {
	// Host is the host's name: "so <Host> gets no decision tools".
	Host string
	// Fault and OK are appended to a failed and a passed probe's message
	// (e.g. which environment the server was started in).
	Fault, OK string
}

// Check probes s within timeout and judges the answer, the same way for
// every host: a server that does not start or answer, one that starts but
// lacks the tool it must serve (a session would silently get none), or one
// line saying what answered.
func Check(ctx context.Context, s Server, timeout time.Duration, w Wording) doctor.Finding {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ans, said, err := Probe(ctx, s.Cmd, s.Want != "")
	switch {
	case err != nil:
		return doctor.Fault(fmt.Sprintf("%s %v%s%s", s.What, err, w.Fault, said), s.Fix)
	case s.Want == "":
		return doctor.OK("%s %s in %s%s", s.What, ans.Summary(), ans.Took.Round(time.Millisecond), w.OK)
	case slices.Contains(ans.Tools, s.Want):
		return doctor.OK("%s %s and lists %s among %d tools in %s%s", s.What, ans.Summary(), s.Want, len(ans.Tools), ans.Took.Round(time.Millisecond), w.OK)
	}
	return doctor.Fault(fmt.Sprintf("%s starts but lists no %s tool (%d tools), so %s gets no decision tools%s%s",
		s.What, s.Want, len(ans.Tools), w.Host, w.Fault, said), s.Fix)
}
