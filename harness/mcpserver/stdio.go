package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio answers newline-delimited JSON-RPC messages read from in,
// writing each response to out as one line, flushed at once. It is
// ServeStdioWith without parallel tools: every request runs in arrival
// order.
func ServeStdio(ctx context.Context, s *server.MCPServer, in io.Reader, out io.Writer) error {
	return ServeStdioWith(ctx, s, in, out, StdioOptions{})
}

// ServeStdioWith is ServeStdio with options.
//
// mcp-go's own stdio server runs tools/call on a worker pool and other
// requests on goroutines of their own, and at end of input it cancels
// calls still queued. nexus runs nexus's own requests one at a time in
// arrival order (a client that pipes a batch gets every answer, in request
// order, and state writes keep their order), the tools o.Parallel names
// (plugin tools) on a bounded pool beside them, and honours
// notifications/cancelled by cancelling that request's context (which
// reaches the plugin). Answers carry their request's id and may overtake
// one another only when a parallel call is involved. At end of input it
// returns nil once the last answer is written.
func ServeStdioWith(ctx context.Context, s *server.MCPServer, in io.Reader, out io.Writer, o StdioOptions) error {
	sess := &stdioSession{notes: make(chan mcp.JSONRPCNotification, 64)}
	if err := s.RegisterSession(ctx, sess); err != nil {
		return fmt.Errorf("mcp stdio: %w", err)
	}
	defer s.UnregisterSession(ctx, sess.SessionID())
	ctx = s.WithContext(ctx, sess)

	w := &lineWriter{w: bufio.NewWriter(out)}
	// Server-initiated notifications (a log message, a list change) are
	// written between responses, never inside one.
	notesDone := make(chan struct{})
	stopNotes := make(chan struct{})
	go func() {
		defer close(notesDone)
		for {
			select {
			case n := <-sess.notes:
				w.write(n)
			case <-stopNotes:
				return
			}
		}
	}()
	defer func() {
		close(stopNotes)
		<-notesDone
		for { // flush what is still queued
			select {
			case n := <-sess.notes:
				w.write(n)
			default:
				return
			}
		}
	}()

	// Reading happens on its own goroutine so a cancelled context ends the
	// loop even while stdin blocks.
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readBoundedLine(r, MaxMessageBytes)
			var tl *TooLongError
			if errors.As(err, &tl) {
				w.write(tooLong(tl)) // answered, and the next line is read
				continue
			}
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	d := newDispatcher(s, w, o)
	for {
		select {
		case <-ctx.Done():
			d.wait() // every request's context ends with ctx
			return nil
		case err := <-readErr:
			d.wait()
			if errors.Is(err, io.EOF) {
				return w.err()
			}
			return fmt.Errorf("mcp stdio: read: %w", err)
		case line := <-lines:
			d.dispatch(ctx, line)
			if err := w.err(); err != nil {
				d.wait()
				return fmt.Errorf("mcp stdio: write: %w", err)
			}
		}
	}
}

// handle answers one message; nil means no answer is due.
func handle(ctx context.Context, s *server.MCPServer, line []byte) any {
	line = bytes.TrimSpace(line)
	var probe struct {
		Method *string         `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		if len(line) > 0 && line[0] == '[' {
			return rpcError(nil, mcp.INVALID_REQUEST, "JSON-RPC batches are not supported; send one message per line")
		}
		return rpcError(nil, mcp.PARSE_ERROR, "Parse error: "+err.Error())
	}
	if probe.Method == nil {
		return nil // a reply to a server-initiated request; nexus sends none
	}
	if e := checkEchoed(line); e != nil {
		return e
	}
	resp := s.HandleMessage(ctx, line)
	if resp == nil {
		return nil
	}
	return resp
}

func rpcError(id any, code int, msg string) mcp.JSONRPCError {
	return mcp.JSONRPCError{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(id),
		Error:   mcp.NewJSONRPCErrorDetails(code, msg, nil),
	}
}

// lineWriter writes one JSON message per line and flushes each.
type lineWriter struct {
	mu   sync.Mutex
	w    *bufio.Writer
	fail error
	// buf is the last large answer's buffer, reused while answers stay
	// about as large: a client listing thousands of tasks gets megabytes
	// per call, and a fresh buffer each time was a large allocation (and
	// the garbage collections it brings) per call.
	buf []byte
}

func (l *lineWriter) write(v any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return
	}
	b, err := encodeMessage(l.buf[:0], v)
	if err != nil {
		l.fail = fmt.Errorf("encode response: %w", err)
		return
	}
	b = append(b, '\n')
	if _, err := l.w.Write(b); err != nil {
		l.fail = err
		return
	}
	l.fail = l.w.Flush()
	// Keep a buffer of 64 KiB or more while it is at least a quarter
	// used; a small answer after a large one lets the large one go.
	if cap(b) >= 64<<10 && len(b) >= cap(b)/4 {
		l.buf = b[:0]
	} else {
		l.buf = nil
	}
}

func (l *lineWriter) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fail
}

// stdioSession is the one client of a stdio server.
type stdioSession struct {
	notes       chan mcp.JSONRPCNotification
	initialized atomic.Bool
	mu          sync.Mutex
	version     string
}

func (s *stdioSession) SessionID() string { return "stdio" }
func (s *stdioSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return s.notes
}
func (s *stdioSession) Initialize()       { s.initialized.Store(true) }
func (s *stdioSession) Initialized() bool { return s.initialized.Load() }

// SetProtocolVersion records the version negotiated by initialize.
func (s *stdioSession) SetProtocolVersion(v string) {
	s.mu.Lock()
	s.version = v
	s.mu.Unlock()
}

// appendMarshal appends v encoded by encoding/json to dst.
func appendMarshal(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// ProtocolVersion returns the negotiated version ("" before initialize).
func (s *stdioSession) ProtocolVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// encodeMessage renders one outgoing message. A tool call's answer (one
// text block and structured content already encoded, as nexus's tools and
// plugins produce them) is written directly: encoding/json would escape
// the text, then re-validate the structured content and the whole result
// once per nesting level, several passes over what can be megabytes.
//
// It appends to dst (which may be nil).
func encodeMessage(dst []byte, v any) ([]byte, error) {
	resp, ok := v.(mcp.JSONRPCResponse)
	if !ok {
		return appendMarshal(dst, v)
	}
	r, ok := resp.Result.(*mcp.CallToolResult)
	if !ok || r.Meta != nil || r.ResultType != "" || len(r.InputRequests) > 0 || r.RequestState != "" ||
		len(r.RawStructuredContent) == 0 || len(r.Content) != 1 ||
		bytes.IndexByte(r.RawStructuredContent, '\n') >= 0 || bytes.IndexByte(r.RawStructuredContent, '\r') >= 0 {
		// Pretty-printed structured content must be compacted: one message
		// per line.
		return appendMarshal(dst, v)
	}
	tc, ok := r.Content[0].(mcp.TextContent)
	if !ok || tc.Annotations != nil || tc.Meta != nil {
		return appendMarshal(dst, v)
	}
	id, err := json.Marshal(resp.ID)
	if err != nil {
		return nil, err
	}
	b := slices.Grow(dst, 96+len(tc.Text)*11/10+len(r.RawStructuredContent))
	b = append(b, `{"id":`...)
	b = append(b, id...)
	b = append(b, `,"jsonrpc":`...)
	b, _ = jsontext.AppendQuote(b, resp.JSONRPC)
	b = append(b, `,"result":{"content":[{"text":`...)
	if b, err = jsontext.AppendQuote(b, tc.Text); err != nil {
		return appendMarshal(dst, v)
	}
	b = append(b, `,"type":`...)
	b, _ = jsontext.AppendQuote(b, tc.Type)
	b = append(b, `}]`...)
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	b = append(b, `,"structuredContent":`...)
	b = append(b, r.RawStructuredContent...)
	b = append(b, `}}`...)
	return b, nil
}
