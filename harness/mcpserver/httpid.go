package mcpserver

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/nexus-harness/nexus/internal/jsonscan"
)

// Exact ids over HTTP. The MCP library's HTTP transport decodes the id
// itself and writes its answers itself (one JSON body, or server-sent
// events), turning a number into a float64 on the way. So the edge hands
// the library a stand-in for an id the library would not echo byte for
// byte: a string made of a per-process mark and the id's text in base64,
// which it echoes unchanged, and the response writer puts the id as sent
// back in place of the stand-in. The stand-in depends only on the id's
// text, so notifications/cancelled naming the same id gets the same one.

// idMark starts every stand-in; its random part keeps a client's own
// string ids from ever looking like one.
var idMark = func() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "nexus-id-" + hex.EncodeToString(b[:]) + "-"
}()

// keepsID reports whether the library echoes an id's text unchanged: a
// string that encoding/json writes back the same way, or an integer of at
// most 15 digits (a float64 holds it exactly and prints it as written).
func keepsID(id []byte) bool {
	if id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) != nil || strings.HasPrefix(s, idMark) {
			return false
		}
		b, err := json.Marshal(s)
		return err == nil && bytes.Equal(b, id)
	}
	digits := bytes.TrimPrefix(id, []byte("-"))
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && (len(digits) > 1 || len(id) > 1)) {
		return false // leading zeros are not JSON; -0 prints as 0
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// standIn is the stand-in of an id, as JSON text.
func standIn(id []byte) []byte {
	return []byte(`"` + idMark + base64.RawURLEncoding.EncodeToString(id) + `"`)
}

// splice replaces data[start:end] with v.
func splice(data []byte, start, end int, v []byte) []byte {
	out := make([]byte, 0, len(data)-(end-start)+len(v))
	out = append(out, data[:start]...)
	out = append(out, v...)
	return append(out, data[end:]...)
}

// standInIDs gives body the stand-ins the library needs: for the request
// id, and for the id a notifications/cancelled names. It returns the body
// and the stand-in of the request id (nil when the id is kept as sent).
func standInIDs(body []byte) ([]byte, []byte) {
	top, complete, _ := jsonscan.Pick(body, "id", "method", "params")
	if !complete {
		return body, nil
	}
	var method string
	_ = json.Unmarshal(top[1].Value, &method)
	if p := top[2]; method == string(mcp.MethodNotificationCancelled) && p.Value != nil {
		inner, ok, _ := jsonscan.Pick(p.Value, "requestId")
		if r := inner[0]; ok && r.Value != nil && validID(r.Value) && !keepsID(r.Value) {
			body = splice(body, p.Start+r.Start, p.Start+r.End, standIn(r.Value))
		}
		return body, nil
	}
	id := top[0]
	if top[1].Value == nil || id.Value == nil || bytes.Equal(id.Value, []byte("null")) || keepsID(id.Value) {
		return body, nil // not a request, or an id the library keeps
	}
	s := standIn(id.Value)
	return splice(body, id.Start, id.End, s), s
}

// idWriter writes a response with the stand-in of the request's id
// replaced by the id as sent. A write may end in the middle of a
// stand-in; those bytes wait for the next write, or for Flush (a message
// boundary) or finish.
type idWriter struct {
	http.ResponseWriter
	from, to []byte
	held     []byte
}

func (w *idWriter) Write(p []byte) (int, error) {
	data := p
	if len(w.held) > 0 {
		data = append(w.held, p...)
		w.held = nil
	}
	for {
		i := bytes.Index(data, w.from)
		if i < 0 {
			break
		}
		if _, err := w.ResponseWriter.Write(data[:i]); err != nil {
			return 0, err
		}
		if _, err := w.ResponseWriter.Write(w.to); err != nil {
			return 0, err
		}
		data = data[i+len(w.from):]
	}
	// Hold back a tail that could be the start of a stand-in.
	keep := 0
	for k := min(len(data), len(w.from)-1); k > 0; k-- {
		if bytes.HasPrefix(w.from, data[len(data)-k:]) {
			keep = k
			break
		}
	}
	if _, err := w.ResponseWriter.Write(data[:len(data)-keep]); err != nil {
		return 0, err
	}
	w.held = append(w.held, data[len(data)-keep:]...)
	return len(p), nil
}

// finish writes what is held back.
func (w *idWriter) finish() {
	if len(w.held) > 0 {
		_, _ = w.ResponseWriter.Write(w.held)
		w.held = nil
	}
}

// Flush keeps server-sent events streaming.
func (w *idWriter) Flush() {
	w.finish()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (write
// deadlines).
func (w *idWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
