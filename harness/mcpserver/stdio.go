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
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/nexus-harness/nexus/internal/jsonscan"
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
	inFlight := newBudget()
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
			release, err := inFlight.take(ctx, int64(len(line)))
			if err != nil {
				continue // ctx ended: the next turn returns
			}
			d.dispatch(ctx, line, release)
			if err := w.err(); err != nil {
				d.wait()
				return fmt.Errorf("mcp stdio: write: %w", err)
			}
		}
	}
}

// handle answers one message the edge has read (readMessage); nil means
// no answer is due. Every answer carries the request's id as sent.
func handle(ctx context.Context, s *server.MCPServer, m message) any {
	var probe struct {
		Method *string `json:"method"`
	}
	if err := json.Unmarshal(m.body, &probe); err != nil {
		if len(m.body) > 0 && m.body[0] == '[' {
			return rpcError(nil, mcp.INVALID_REQUEST, "JSON-RPC batches are not supported; send one message per line")
		}
		return rpcError(nil, mcp.PARSE_ERROR, "Parse error: "+err.Error())
	}
	if probe.Method == nil {
		return nil // a reply to a server-initiated request; nexus sends none
	}
	if e := checkEchoed(m.body, m.id); e != nil {
		return reply{*e, m.id}
	}
	resp := s.HandleMessage(withArgs(ctx, m), m.body)
	if resp == nil {
		return nil
	}
	return reply{resp, m.id}
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
	// quoted is writeMessage's scratch space for the text in pieces.
	quoted []byte
}

func (l *lineWriter) write(v any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return
	}
	if err := l.writeMessage(v); err != nil {
		l.fail = err
		return
	}
	l.fail = l.w.Flush()
}

// quoteChunk is how much of a tool answer's text writeMessage quotes at a
// time.
const quoteChunk = 64 << 10

// writeMessage writes one message and its newline. A tool call's answer
// is written in its parts: the structured content straight from the
// tool's bytes and the text quoted a piece at a time, so an answer of
// megabytes (task_list of 10,000 tasks: 9.5 MB) is never copied into one
// more buffer of its size. The bytes are encodeMessage's.
func (l *lineWriter) writeMessage(v any) error {
	p, ok, err := answerParts(v)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	if !ok || !utf8.ValidString(p.text) {
		// Not an answer of that shape, or a text encodeMessage may have to
		// hand to encoding/json: encoded whole, nothing written before.
		b, err := encodeMessage(nil, v)
		if err != nil {
			return fmt.Errorf("encode response: %w", err)
		}
		if _, err := l.w.Write(append(b, '\n')); err != nil {
			return err
		}
		return nil
	}
	if _, err := l.w.Write(p.head); err != nil {
		return err
	}
	text := p.text
	l.w.WriteByte('"')
	for len(text) > 0 {
		n := min(len(text), quoteChunk)
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n++ // never split a character
		}
		q, _ := jsontext.AppendQuote(l.quoted[:0], text[:n])
		l.quoted = q
		if _, err := l.w.Write(q[1 : len(q)-1]); err != nil {
			return err
		}
		text = text[n:]
	}
	l.w.WriteByte('"')
	l.w.Write(p.mid)
	l.w.Write(p.raw)
	_, err = l.w.WriteString("}}\n")
	return err
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

// appendMarshal appends v encoded by encoding/json to dst, without
// escaping <, > and & (as JSON.stringify writes; an id sent as "<&>" comes
// back as sent).
func appendMarshal(dst []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
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
	p, ok, err := answerParts(v)
	if err != nil {
		return nil, err
	}
	if !ok {
		msg, id := unwrap(v)
		b, err := appendMarshal(dst, msg)
		if err != nil || id == nil {
			return b, err
		}
		return append(b[:len(dst)], exactID(b[len(dst):], id)...), nil
	}
	b := slices.Grow(dst, len(p.head)+len(p.text)*11/10+len(p.mid)+len(p.raw)+4)
	b = append(b, p.head...)
	if b, err = jsontext.AppendQuote(b, p.text); err != nil {
		return appendMarshal(dst, v)
	}
	b = append(b, p.mid...)
	b = append(b, p.raw...)
	b = append(b, `}}`...)
	return b, nil
}

// reply is an answer with its request's id as sent, which is written in
// place of the text encoding/json gives the id (it escapes <, > and & in
// strings, whatever the encoder's settings, and a float64 loses digits).
type reply struct {
	msg any
	id  json.RawMessage
}

func unwrap(v any) (any, json.RawMessage) {
	if r, ok := v.(reply); ok {
		return r.msg, r.id
	}
	return v, nil
}

// exactID puts id in place of the id member of an encoded message.
func exactID(enc []byte, id json.RawMessage) []byte {
	m, ok := jsonscan.First(enc, "id")
	if !ok || bytes.Equal(m.Value, id) {
		return enc
	}
	return splice(enc, m.Start, m.End, id)
}

// parts is a tool call's answer as encodeMessage writes it: head, the
// text quoted, mid, raw (the structured content), then "}}".
type parts struct {
	head, mid, raw []byte
	text           string
}

// answerParts splits a tool call's answer of one text block and encoded
// structured content; ok is false for any other message.
func answerParts(v any) (parts, bool, error) {
	msg, id := unwrap(v)
	resp, ok := msg.(mcp.JSONRPCResponse)
	if !ok {
		return parts{}, false, nil
	}
	r, ok := resp.Result.(*mcp.CallToolResult)
	if !ok || r.Meta != nil || r.ResultType != "" || len(r.InputRequests) > 0 || r.RequestState != "" ||
		len(r.RawStructuredContent) == 0 || len(r.Content) != 1 ||
		bytes.IndexByte(r.RawStructuredContent, '\n') >= 0 || bytes.IndexByte(r.RawStructuredContent, '\r') >= 0 {
		// Pretty-printed structured content must be compacted: one message
		// per line.
		return parts{}, false, nil
	}
	tc, ok := r.Content[0].(mcp.TextContent)
	if !ok || tc.Annotations != nil || tc.Meta != nil {
		return parts{}, false, nil
	}
	head := []byte(`{"id":`)
	if id != nil {
		head = append(head, id...)
	} else {
		var err error
		if head, err = appendMarshal(head, resp.ID); err != nil {
			return parts{}, false, err
		}
	}
	head = append(head, `,"jsonrpc":`...)
	head, _ = jsontext.AppendQuote(head, resp.JSONRPC)
	head = append(head, `,"result":{"content":[{"text":`...)
	mid := []byte(`,"type":`)
	mid, _ = jsontext.AppendQuote(mid, tc.Type)
	mid = append(mid, `}]`...)
	if r.IsError {
		mid = append(mid, `,"isError":true`...)
	}
	mid = append(mid, `,"structuredContent":`...)
	return parts{head: head, mid: mid, raw: r.RawStructuredContent, text: tc.Text}, true, nil
}
