package view

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
)

// Decisions is what the page needs of the decision store: every decision
// with its supersession links, and the check_decision answer for an
// approach. nexus does not link the store (docs/architecture.md); the
// implementation the command uses is HostDecisions.
type Decisions interface {
	Export(ctx context.Context) (*DecisionExport, error)
	// Check returns exactly what `nexus decision check` prints for the
	// same approach and context.
	Check(ctx context.Context, approach, context string) (string, error)
}

// DecisionExport is `nexus decision export`'s answer.
type DecisionExport struct {
	Store     string           `json:"store"`
	Decisions []DecisionRecord `json:"decisions"`
	Problems  []struct {
		File   string `json:"file"`
		Reason string `json:"reason"`
	} `json:"problems"`
}

// DecisionRecord is one decision of the store (newest first).
type DecisionRecord struct {
	Number       int    `json:"number"`
	Title        string `json:"title"`
	Date         string `json:"date"`
	Status       string `json:"status"`
	Type         string `json:"type,omitempty"`
	Confidence   string `json:"confidence,omitempty"`
	Supersedes   string `json:"supersedes,omitempty"`
	SupersededBy string `json:"superseded_by,omitempty"`
	File         string `json:"file"`
}

// HostDecisions reaches the store the way `nexus decision` does: through
// its command line in the plugin host program (`nexus-plugins decision`),
// with the arguments nexus's configuration gives it. So the page's check
// answer is the command line's by construction: same program, same
// arguments, same store.
type HostDecisions struct {
	// Command returns the plugin host program run with args
	// (pluginhost.HostCommand).
	Command func(args ...string) (*exec.Cmd, error)
	// Args are the host's own arguments up to and including "--"
	// ("decision", "--frontmatter", ..., "--").
	Args []string
}

// Bounds of what the store's command line may print.
const (
	maxExportBytes = 64 << 20
	maxCheckBytes  = 1 << 20
	maxStderrBytes = 64 << 10
)

// Export runs `decision export`.
func (h HostDecisions) Export(ctx context.Context) (*DecisionExport, error) {
	out, err := h.run(ctx, maxExportBytes, "export")
	if err != nil {
		return nil, err
	}
	var x DecisionExport
	if err := json.Unmarshal(out, &x); err != nil {
		return nil, fmt.Errorf("nexus decision export printed something that is not its JSON: %w", err)
	}
	return &x, nil
}

// Check runs `decision check`; the approach comes after "--" so that one
// starting with '-' is not taken for a flag.
func (h HostDecisions) Check(ctx context.Context, approach, context string) (string, error) {
	args := []string{"check"}
	if context != "" {
		args = append(args, "--context", context)
	}
	out, err := h.run(ctx, maxCheckBytes, append(args, "--", approach)...)
	return strings.TrimSuffix(string(out), "\n"), err
}

func (h HostDecisions) run(ctx context.Context, limit int64, args ...string) ([]byte, error) {
	cmd, err := h.Command(append(append([]string(nil), h.Args...), args...)...)
	if err != nil {
		return nil, fmt.Errorf("the decision store runs in the plugin host: %w", err)
	}
	var stdout, stderr capped
	stdout.limit, stderr.limit = limit, maxStderrBytes
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the plugin host %s: %w", cmd.Path, err)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			cmd.Process.Kill()
		case <-done:
		}
	}()
	err = cmd.Wait()
	close(done)
	if stdout.over {
		return nil, fmt.Errorf("nexus decision %s printed more than %d bytes", args[0], limit)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		msg := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(stderr.String()), "nexus: "))
		if msg == "" {
			msg = ee.Error()
		}
		return nil, errors.New(msg)
	}
	if err != nil {
		return nil, err
	}
	return stdout.Bytes(), nil
}

// capped keeps at most limit bytes and notes that more came.
type capped struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int64
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.limit - int64(c.buf.Len()); int64(len(p)) > room {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) Bytes() []byte  { c.mu.Lock(); defer c.mu.Unlock(); return c.buf.Bytes() }
func (c *capped) String() string { return string(c.Bytes()) }

var _ io.Writer = (*capped)(nil)
