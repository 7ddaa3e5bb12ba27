package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// padded returns a ping request of exactly n bytes (whitespace inside the
// object makes up the length).
func padded(t *testing.T, id, n int) string {
	t.Helper()
	head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"`, id)
	if n < len(head)+1 {
		t.Fatalf("cannot pad to %d bytes", n)
	}
	return head + strings.Repeat(" ", n-len(head)-1) + "}"
}

func TestReadBoundedLineBoundary(t *testing.T) {
	for _, c := range []struct {
		name    string
		size    int
		refused bool
	}{
		{"limit-1", MaxMessageBytes - 1, false},
		{"limit", MaxMessageBytes, false},
		{"limit+1", MaxMessageBytes + 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := padded(t, 7, c.size) + "\n" + padded(t, 8, 64) + "\n"
			r := bufio.NewReaderSize(strings.NewReader(in), 64<<10)
			line, err := readBoundedLine(r, MaxMessageBytes)
			if c.refused {
				tl, ok := err.(*TooLongError)
				if !ok {
					t.Fatalf("err = %v, want *TooLongError", err)
				}
				if string(tl.ID) != "7" || !strings.Contains(tl.Error(), "4194304 bytes") {
					t.Errorf("refusal %v (id %v) does not carry the id and the limit", tl, tl.ID)
				}
			} else if err != nil || len(line) != c.size+1 {
				t.Fatalf("got %d bytes, %v; want %d", len(line), err, c.size+1)
			}
			next, err := readBoundedLine(r, MaxMessageBytes)
			if err != nil || !strings.Contains(string(next), `"id":8`) {
				t.Fatalf("the line after is lost: %q, %v", next, err)
			}
		})
	}
}

func TestStdioRefusesOversizedMessageAndGoesOn(t *testing.T) {
	in := padded(t, 1, MaxMessageBytes+1) + "\n" + padded(t, 2, MaxMessageBytes) + "\n"
	msgs := serveLines(t, in)
	if len(msgs) != 2 {
		t.Fatalf("got %d answers, want 2: %v", len(msgs), msgs)
	}
	e, _ := msgs[0]["error"].(map[string]any)
	if msgs[0]["id"] != float64(1) || e == nil || !strings.Contains(fmt.Sprint(e["message"]), "limit of 4194304 bytes") {
		t.Errorf("oversized message: %v", msgs[0])
	}
	if msgs[1]["id"] != float64(2) || msgs[1]["error"] != nil {
		t.Errorf("message at the limit: %v", msgs[1])
	}
}

func TestLongNamesAreNotEchoed(t *testing.T) {
	for _, c := range []struct {
		n       int
		refused bool
	}{{maxNameBytes - 1, false}, {maxNameBytes, false}, {maxNameBytes + 1, true}, {1 << 20, true}} {
		name := strings.Repeat("x", c.n)
		msgs := serveLines(t, req(1, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}}))
		if len(msgs) != 1 {
			t.Fatalf("%d answers", len(msgs))
		}
		text := fmt.Sprint(msgs[0])
		if c.refused {
			if strings.Contains(text, name[:maxNameBytes+1]) || !strings.Contains(text, "limit of 128 bytes") {
				t.Errorf("name of %d bytes: %.300s", c.n, text)
			}
		} else if strings.Contains(text, "limit of") {
			t.Errorf("name of %d bytes refused for its length: %.300s", c.n, text)
		}
	}
}

func TestHTTPBodyLimitOriginAndBearer(t *testing.T) {
	e, _ := newEngine(t)
	h, err := HTTPHandler(newServer(t, e, "nx_"), testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	url := ts.URL + EndpointPath
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	do := func(origin, auth, body string) (int, string) {
		r, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Authorization", auth)
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		bufio.NewReader(resp.Body).WriteTo(&b)
		return resp.StatusCode, b.String()
	}
	for _, c := range []struct {
		origin, auth string
		want         int
	}{
		{"", "Bearer " + testToken, 200},
		{"", "bearer " + testToken, 200},
		{"", "BEARER " + testToken, 200},
		{"http://localhost:3000", "Bearer " + testToken, 200},
		{"http://127.0.0.1", "Bearer " + testToken, 200},
		{"https://[::1]:8443", "Bearer " + testToken, 200},
		{"http://evil.example", "Bearer " + testToken, 403},
		{"http://localhost.evil.example", "Bearer " + testToken, 403},
		{"null", "Bearer " + testToken, 403},
		{"file://", "Bearer " + testToken, 403},
		{"http://evil.example", "", 403},
		{"", "bearer wrong-token-wrong-token", 401},
	} {
		if got, body := do(c.origin, c.auth, init); got != c.want {
			t.Errorf("Origin %q, Authorization %q: status %d, want %d (%s)", c.origin, c.auth, got, c.want, body)
		}
	}
	// Body size at the boundary.
	if got, body := do("", "Bearer "+testToken, padded(t, 3, MaxMessageBytes)); got == http.StatusRequestEntityTooLarge {
		t.Errorf("body at the limit refused: %d %.200s", got, body)
	}
	got, body := do("", "Bearer "+testToken, padded(t, 4, MaxMessageBytes+1))
	if got != http.StatusRequestEntityTooLarge || !strings.Contains(body, "4194304 bytes") || !strings.Contains(body, `"id":4`) {
		t.Errorf("body over the limit: %d %.300s", got, body)
	}
}

func TestLongMethodsAndIDsAreNotEchoed(t *testing.T) {
	long := strings.Repeat("m", 1<<20)
	for _, c := range []struct {
		name, line, want string
	}{
		{"method at the limit", `{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("m", maxMethodBytes) + `"}`, "not found"},
		{"method over the limit", `{"jsonrpc":"2.0","id":1,"method":"` + long + `"}`, "method is longer than the limit of 128 bytes"},
		{"id at the limit", `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", maxIDBytes-2) + `","method":"ping"}`, `"result"`},
		{"id over the limit", `{"jsonrpc":"2.0","id":"` + long + `","method":"ping"}`, "id is longer than the limit of 256 bytes"},
	} {
		msgs := serveLines(t, c.line+"\n")
		if len(msgs) != 1 {
			t.Fatalf("%s: %d answers", c.name, len(msgs))
		}
		b, _ := json.Marshal(msgs[0])
		if !strings.Contains(string(b), c.want) || len(b) > 2048 {
			t.Errorf("%s: %.300s (%d bytes)", c.name, b, len(b))
		}
	}
}
