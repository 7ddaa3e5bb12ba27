package opencode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/nexus-harness/nexus/internal/jsonscan"
)

// The wire protocol between the generated plugin and nexus.
//
// The plugin writes one Request per line (JSON, UTF-8, no raw newline
// inside: JSON.stringify never emits one) and reads one Reply per line,
// in order. It talks to a long-lived `nexus hook --host opencode --serve`
// over two FIFOs, or, when that child cannot be started or has died, runs
// `nexus hook --host opencode` once per hook with the request on its
// standard input and the reply on its standard output. Serve is nexus's
// side of both: one request or thousands, the same lines.
//
// The plugin moves data only: it forwards a hook's two arguments as they
// are (functions dropped, cycles cut, strings in tool results clipped),
// and applies a reply's fields without looking at them. Every decision,
// the mapping to lifecycle events included, is made in Go.

// ProtocolVersion is the version of the wire protocol; a request of
// another version gets an error reply, which makes the plugin fail closed
// on the tool gate and tell the user to re-run `nexus install opencode`.
const ProtocolVersion = 1

// MaxLine bounds one request line (the hook payload limit of every host).
const MaxLine = 10 << 20

// Request is one hook call the plugin forwards.
type Request struct {
	// V is the protocol version the plugin speaks (ProtocolVersion).
	V int `json:"v"`
	// ID numbers the plugin's requests (1, 2, …); the reply carries it
	// back, so a reply that arrives after the plugin gave up waiting is
	// recognised and skipped.
	ID uint64 `json:"id"`
	// Hook is OpenCode's hook name: chat.message, tool.execute.before,
	// tool.execute.after, event, dispose.
	Hook string `json:"hook"`
	// PID is OpenCode's process id: the sessions a process started are
	// the ones its dispose ends.
	PID int `json:"pid"`
	// Dir is the directory OpenCode runs in (the plugin's ctx.directory).
	Dir string `json:"dir"`
	// Input and Output are the hook's two arguments, as OpenCode passed
	// them (absent for hooks with none).
	Input  json.RawMessage `json:"input,omitempty"`
	Output json.RawMessage `json:"output,omitempty"`
}

// Reply is what the plugin applies. The zero Reply (with its ID) changes
// nothing.
type Reply struct {
	ID uint64 `json:"id"`
	// Block makes tool.execute.before throw an Error with this message:
	// OpenCode does not run the call and the model gets the message as the
	// tool's result.
	Block string `json:"block,omitempty"`
	// Parts are pushed to chat.message's output.parts as synthetic text
	// parts: they reach the model after the user's text, and stay in the
	// session's history.
	Parts []string `json:"parts,omitempty"`
	// Append is added to a tool's result in tool.execute.after (after a
	// blank line; for an MCP result, as one more text content item).
	Append string `json:"append,omitempty"`
	// Error says nexus could not handle the request at all (transport,
	// protocol version, a failing handler). The plugin treats it as no
	// answer: tool.execute.before fails closed with this text, other
	// hooks go on unchanged.
	Error string `json:"error,omitempty"`
}

// Handler answers one request. An error becomes an Error reply.
type Handler func(ctx context.Context, req Request) (Reply, error)

// Serve reads requests from in and writes one reply line to out for each,
// in order, until in ends (nil) or ctx is done (ctx.Err()). A line that is
// too long, too deep, not a request or of another protocol version gets an
// Error reply carrying the request's id when it can be read; a handler's
// error or panic gets one too. Serve handles one request at a time, as the
// plugin asks them (its calls are synchronous).
//
// When ctx ends while a read is blocked, Serve returns at once and leaves
// the blocked read behind: the caller is expected to exit.
func Serve(ctx context.Context, in io.Reader, out io.Writer, handle Handler) error {
	return serve(ctx, in, out, handle, false)
}

// ServeOne answers the first request of in, as Serve does, and returns
// (the one process per hook the plugin falls back to).
func ServeOne(ctx context.Context, in io.Reader, out io.Writer, handle Handler) error {
	return serve(ctx, in, out, handle, true)
}

func serve(ctx context.Context, in io.Reader, out io.Writer, handle Handler, once bool) error {
	lines := make(chan line)
	stop := make(chan struct{})
	defer close(stop)
	go readLines(in, lines, stop)
	for {
		var l line
		var ok bool
		select {
		case <-ctx.Done():
			return ctx.Err()
		case l, ok = <-lines:
		}
		if !ok {
			return nil
		}
		if l.err != nil {
			return l.err
		}
		reply := answer(ctx, l, handle)
		b, err := encodeReply(reply)
		if err != nil {
			b, _ = encodeReply(Reply{ID: reply.ID, Error: "nexus could not encode its reply: " + err.Error()})
		}
		if _, err := out.Write(b); err != nil {
			return fmt.Errorf("write reply: %w", err)
		}
		if once {
			return nil
		}
	}
}

// line is one request line read, or why reading stopped.
type line struct {
	data []byte
	// over is set for a line longer than MaxLine; data then holds its
	// first bytes (enough to read the id).
	over bool
	err  error
}

// readLines sends each line of r until it ends; a read error other than
// EOF is sent last.
func readLines(r io.Reader, out chan<- line, stop <-chan struct{}) {
	defer close(out)
	br := bufio.NewReaderSize(r, 64<<10)
	send := func(l line) bool {
		select {
		case out <- l:
			return true
		case <-stop:
			return false
		}
	}
	for {
		data, over, err := readLine(br)
		if len(bytes.TrimSpace(data)) > 0 || over {
			if !send(line{data: data, over: over}) {
				return
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			send(line{err: fmt.Errorf("read request: %w", err)})
			return
		}
	}
}

// readLine reads up to the next newline (or the end of input). A line
// longer than MaxLine is read to its end but only its first 64 KiB kept.
func readLine(br *bufio.Reader) (data []byte, over bool, err error) {
	for {
		chunk, e := br.ReadSlice('\n')
		switch {
		case over:
			// discarding the rest of a long line
		case len(data)+len(chunk) > MaxLine+1:
			over = true
			if len(data) > 64<<10 {
				data = data[:64<<10]
			}
		default:
			data = append(data, chunk...)
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(data, "\r\n"), over, e
	}
}

// answer runs the handler on one line, turning every failure into an
// Error reply.
func answer(ctx context.Context, l line, handle Handler) (r Reply) {
	id := peekID(l.data)
	defer func() {
		if p := recover(); p != nil {
			r = Reply{ID: id, Error: fmt.Sprintf("nexus failed handling the request: internal error: %v", p)}
		}
	}()
	if l.over {
		return Reply{ID: id, Error: fmt.Sprintf("the request is over %d MiB; nexus reads at most %d bytes", MaxLine>>20, MaxLine)}
	}
	req, err := DecodeRequest(l.data)
	if err != nil {
		return Reply{ID: id, Error: err.Error()}
	}
	r, err = handle(ctx, req)
	r.ID = req.ID
	if err != nil {
		return Reply{ID: req.ID, Error: oneLine(err.Error())}
	}
	return r
}

// DecodeRequest reads one request line: depth-checked before decoding
// (the plugin forwards whatever OpenCode and the model put in a hook's
// arguments), one JSON object, the protocol version nexus speaks.
func DecodeRequest(data []byte) (Request, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return Request{}, errors.New("invalid request: expected one JSON object")
	}
	if err := jsonscan.CheckDepth(data, jsonscan.MaxDepth); err != nil {
		return Request{}, fmt.Errorf("request refused: %v", err)
	}
	var req Request
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&req); err != nil {
		return Request{}, fmt.Errorf("invalid request: %v", err)
	}
	if dec.More() {
		return Request{}, errors.New("invalid request: more than one JSON value on the line")
	}
	if req.V != ProtocolVersion {
		return req, fmt.Errorf("the OpenCode plugin speaks protocol %d and this nexus speaks %d: run `nexus install opencode` again to rewrite the plugin", req.V, ProtocolVersion)
	}
	if req.Hook == "" {
		return req, errors.New("invalid request: no hook named")
	}
	return req, nil
}

// peekID reads a request's id without decoding it (the line may be cut
// off, too deep or not JSON after it); 0 when it has none.
func peekID(data []byte) uint64 {
	m, ok := jsonscan.First(data, "id")
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(string(m.Value), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// encodeReply renders a reply as one line.
func encodeReply(r Reply) ([]byte, error) { return EncodeLine(r) }

// EncodeRequest renders a request as one line, as the plugin writes it
// (for tests and tools that speak to nexus as the plugin does).
func EncodeRequest(r Request) ([]byte, error) { return EncodeLine(r) }

// EncodeLine renders one JSON line, with <, > and & as they are.
func EncodeLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	var out []byte
	for _, f := range bytes.Split([]byte(s), []byte("\n")) {
		f = bytes.TrimSpace(f)
		if len(f) == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, "; "...)
		}
		out = append(out, f...)
	}
	return string(out)
}
