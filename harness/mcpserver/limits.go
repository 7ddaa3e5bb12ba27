package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/nexus-harness/nexus/internal/jsonscan"
)

// Size limits of the MCP transports (docs/security.md lists every limit).
// They hold before anything is decoded: a message over MaxMessageBytes is
// never held in memory whole, and nothing a client sends is echoed back at
// more than maxEcho bytes.
const (
	// MaxMessageBytes bounds one JSON-RPC message: a stdio line or an HTTP
	// request body. The largest tool argument (artifact_write's content,
	// 2 MiB) fits with room for JSON escaping.
	MaxMessageBytes = 4 << 20
	// maxNameBytes bounds params.name (a tool or prompt name, which the MCP
	// library repeats in its "not found" error): MCP names are at most 128
	// characters.
	maxNameBytes = 128
	// maxURIBytes bounds params.uri (resources/read echoes it).
	maxURIBytes = 2048
	// maxMethodBytes bounds method (an unknown method is named in the
	// error); MCP's longest is under 40 bytes.
	maxMethodBytes = 128
	// maxIDBytes bounds the request id as sent (JSON-RPC repeats it in
	// the answer).
	maxIDBytes = 256
)

// TooLongError reports a message over MaxMessageBytes. ID is the request
// id as sent when it could be read from the start of the message, else nil.
type TooLongError struct {
	Limit int
	ID    json.RawMessage
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("message refused: longer than the limit of %d bytes (%s) per MCP message; "+
		"send large content in smaller pieces", e.Limit, mib(e.Limit))
}

func mib(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// readBoundedLine reads one line whose message (the bytes before the
// newline) is at most limit bytes.
// A longer line is read to its end and dropped, without being kept, and
// reported as a *TooLongError (the stream stays usable: the next call reads
// the next line). err is otherwise the reader's error (io.EOF at the end).
func readBoundedLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		n := len(line) + len(chunk) // the message without its line end
		if n > 0 && err == nil {
			n--
		}
		if n > limit {
			// Keep the head to find the id, then discard the rest.
			head := append(line, chunk[:min(len(chunk), 4096)]...)
			tl := &TooLongError{Limit: limit, ID: peekID(head)}
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, tl
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// peekID reads the "id" member of a JSON object from the start of a
// message that may be cut off, so an oversized or refused request can
// still be answered under its own id, as sent. It returns nil when the id
// is not among the whole members before the cut, or is not a string or a
// number, or is too long to repeat.
func peekID(head []byte) json.RawMessage {
	m, _, _ := jsonscan.Pick(head, "id")
	v := m[0].Value
	if v == nil || len(v) > maxIDBytes || bytes.Equal(v, []byte("null")) || !validID(v) || !json.Valid(v) {
		return nil
	}
	return v
}

// checkEchoed refuses a request whose method, name or URI is too long
// to repeat: the MCP library answers an unknown tool or method with its
// name. (An id too long to repeat is readMessage's.) It returns nil when
// the message is fine or is not a JSON object (the caller's parser reports
// that). id is the request's id as sent.
func checkEchoed(msg []byte, id json.RawMessage) *mcp.JSONRPCError {
	var probe struct {
		Method json.RawMessage `json:"method"`
		Params struct {
			Name json.RawMessage `json:"name"`
			URI  json.RawMessage `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &probe) != nil {
		return nil
	}
	field, limit := "", 0
	switch {
	case len(probe.Method) > maxMethodBytes+2:
		field, limit = "method", maxMethodBytes
	case len(probe.Params.Name) > maxNameBytes+2: // +2: the quotes
		field, limit = "params.name", maxNameBytes
	case len(probe.Params.URI) > maxURIBytes+2:
		field, limit = "params.uri", maxURIBytes
	default:
		return nil
	}
	e := rpcError(rawID(id), mcp.INVALID_PARAMS,
		fmt.Sprintf("%s is longer than the limit of %d bytes", field, limit))
	return &e
}

// tooLong is the JSON-RPC answer to an oversized message.
func tooLong(tl *TooLongError) mcp.JSONRPCError {
	return rpcError(rawID(tl.ID), mcp.INVALID_REQUEST, tl.Error())
}

// limitBody reads a POST body up to MaxMessageBytes: a longer one gets 413
// with a JSON-RPC error naming the limit, and nothing of it is kept. Then
// the edge applies as on stdio (readMessage: depth, the id kept as sent, a
// tool call's arguments kept for its handler), and an overlong name or URI
// gets the same error as on stdio. The body handed on is the edge's.
//
// Bodies are read only as MaxInFlightBytes allows (a body of unknown
// length counts as the largest), and count until the request is answered.
func limitBody(next http.Handler) http.Handler {
	inFlight := newBudget()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > MaxMessageBytes {
			head, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
			writeJSONRPC(w, http.StatusRequestEntityTooLarge, tooLong(&TooLongError{Limit: MaxMessageBytes, ID: peekID(head)}))
			return
		}
		size := r.ContentLength
		if size < 0 {
			size = MaxMessageBytes
		}
		release, err := inFlight.take(r.Context(), size)
		if err != nil {
			return // the client has gone
		}
		defer release()
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxMessageBytes+1))
		if err != nil {
			writeJSONRPC(w, http.StatusBadRequest, rpcError(nil, mcp.PARSE_ERROR, "read request body: "+err.Error()))
			return
		}
		if len(body) > MaxMessageBytes {
			writeJSONRPC(w, http.StatusRequestEntityTooLarge, tooLong(&TooLongError{Limit: MaxMessageBytes, ID: peekID(body[:4096])}))
			return
		}
		m, refused := readMessage(body)
		if refused != nil {
			writeJSONRPC(w, http.StatusBadRequest, reply{*refused, m.id})
			return
		}
		if e := checkEchoed(m.body, m.id); e != nil {
			writeJSONRPC(w, http.StatusOK, reply{*e, m.id})
			return
		}
		body, stand := standInIDs(m.body)
		r = r.WithContext(withArgs(r.Context(), m))
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		if stand != nil {
			iw := &idWriter{ResponseWriter: w, from: stand, to: m.id}
			defer iw.finish()
			w = iw
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSONRPC(w http.ResponseWriter, status int, v any) {
	b, _ := encodeMessage(nil, v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
