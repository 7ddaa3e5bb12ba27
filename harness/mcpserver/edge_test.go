package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/jsonscan"
)

// serveRaw runs a stdio server over input and returns its output lines.
func serveRaw(t *testing.T, e Engine, input string) []string {
	t.Helper()
	var out bytes.Buffer
	if err := ServeStdioWith(context.Background(), newServer(t, e, "nx_"), strings.NewReader(input), &out, StdioOptions{Parallel: ParallelTools(e)}); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

// httpPeer is an initialised streamable HTTP session.
type httpPeer struct {
	t   *testing.T
	url string
	sid string
}

func newHTTPPeer(t *testing.T, e Engine) *httpPeer {
	t.Helper()
	h, err := HTTPHandler(newServer(t, e, "nx_"), testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	p := &httpPeer{t: t, url: ts.URL + EndpointPath}
	resp, body := p.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	p.sid = resp.Header.Get("Mcp-Session-Id")
	p.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

// post sends one message; the answer is the JSON message of the body (of
// its last server-sent event when the answer is a stream).
func (p *httpPeer) post(msg string) (*http.Response, string) {
	p.t.Helper()
	r, err := http.NewRequest(http.MethodPost, p.url, strings.NewReader(msg))
	if err != nil {
		p.t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer "+testToken)
	r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if p.sid != "" {
		r.Header.Set("Mcp-Session-Id", p.sid)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := strings.TrimSpace(string(b))
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(body, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				body = d
			}
		}
	}
	return resp, body
}

// idOf returns the text of an answer's id.
func idOf(t *testing.T, answer string) string {
	t.Helper()
	m, complete, _ := jsonscan.Pick([]byte(answer), "id")
	if !complete || !json.Valid([]byte(answer)) {
		t.Fatalf("answer is not one JSON object: %.300s", answer)
	}
	return string(m[0].Value)
}

// exactIDs are ids a float64 would change (and some it would not), and
// strings encoding/json would write differently.
var exactIDs = []string{`9007199254740993`, `12345678901234567890123`, `1.0`, `-0`, `1e2`, `0`, `-17`,
	`123456789012345`, `1234567890123456`, `"x"`, `""`, `"\u0078"`, `"<&>"`, `"é"`, `"\ud83d\ude00"`}

// idCases are requests of every kind of answer: a result, a tool's error
// result, a protocol error of the library, and refusals of the edge.
var idCases = []struct {
	name, msg string // msg has %s where the id goes
	errCode   float64
}{
	{"ping", `{"jsonrpc":"2.0","id":%s,"method":"ping"}`, 0},
	{"tool result", `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"nx_plan_status","arguments":{}}}`, 0},
	{"tool error", `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"nx_task_add","arguments":{"zz":1}}}`, 0},
	{"unknown method", `{"jsonrpc":"2.0","id":%s,"method":"no/such"}`, -32601},
	{"unknown tool", `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, -32602},
	{"too deep", `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"nx_plan_status","arguments":{"x":` + nested(70) + `}}}`, -32600},
	{"name too long", `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"` + strings.Repeat("n", 200) + `"}}`, -32602},
}

func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// TestIDsEchoedExactly (issue 22.8): every answer carries its request's id
// byte for byte, over stdio and HTTP, whatever the answer.
func TestIDsEchoedExactly(t *testing.T) {
	e, _ := newEngine(t)
	for _, door := range []string{"stdio", "http"} {
		t.Run(door, func(t *testing.T) {
			var hp *httpPeer
			var in strings.Builder
			if door == "http" {
				hp = newHTTPPeer(t, e)
			} else {
				in.WriteString(req(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}}))
			}
			var want []string
			for _, c := range idCases {
				for _, id := range exactIDs {
					msg := fmt.Sprintf(c.msg, id)
					if hp == nil {
						in.WriteString(msg + "\n")
						want = append(want, id)
						continue
					}
					_, answer := hp.post(msg)
					if got := idOf(t, answer); got != id {
						t.Errorf("%s, id %s: answered with id %s: %.300s", c.name, id, got, answer)
					}
					checkCode(t, c.name, answer, c.errCode)
				}
			}
			if hp != nil {
				return
			}
			lines := serveRaw(t, e, in.String())[1:] // after initialize
			if len(lines) != len(want) {
				t.Fatalf("%d answers for %d requests", len(lines), len(want))
			}
			for i, line := range lines {
				c := idCases[i/len(exactIDs)]
				if got := idOf(t, line); got != want[i] {
					t.Errorf("%s, id %s: answered with id %s: %.300s", c.name, want[i], got, line)
				}
				checkCode(t, c.name, line, c.errCode)
			}
		})
	}
}

func checkCode(t *testing.T, name, answer string, code float64) {
	t.Helper()
	var m struct {
		Error *struct {
			Code float64 `json:"code"`
		} `json:"error"`
	}
	json.Unmarshal([]byte(answer), &m)
	switch {
	case code == 0 && m.Error != nil:
		t.Errorf("%s: error answer %.300s", name, answer)
	case code != 0 && (m.Error == nil || m.Error.Code != code):
		t.Errorf("%s: answer %.300s, want error %v", name, answer, code)
	}
}

// TestCancelByExactID: notifications/cancelled names a request by its id
// as sent; 9007199254740993 and 9007199254740992 are two requests.
func TestCancelByExactID(t *testing.T) {
	for _, door := range []string{"stdio", "http"} {
		t.Run(door, func(t *testing.T) {
			e, _ := newEngine(t)
			started := make(chan string, 4)
			ended := make(chan string, 4)
			e.Register(pluginTool("slow_wait", []string{}, func(ctx context.Context, args map[string]any) (*tools.Result, error) {
				approach, _ := args["approach"].(string)
				started <- approach
				select {
				case <-ctx.Done():
					ended <- approach
				case <-time.After(500 * time.Millisecond):
				}
				return &tools.Result{Text: "done " + approach}, nil
			}))
			call := func(id, approach string) string {
				return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"slow_wait","arguments":{"approach":"` + approach + `"}}}`
			}
			cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993}}`
			var answers []string
			switch door {
			case "stdio":
				p := newStdioPeer(t, e, StdioOptions{Parallel: ParallelTools(e)})
				p.send(req(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}}))
				p.next(5 * time.Second)
				p.send(call("9007199254740993", "drop") + "\n")
				<-started
				p.send(call("9007199254740992", "keep") + "\n")
				<-started
				p.send(cancel + "\n")
				for _, m := range p.finish() {
					answers = append(answers, jsonText(m))
				}
			case "http":
				hp := newHTTPPeer(t, e)
				var wg sync.WaitGroup
				var mu sync.Mutex
				// The one to cancel starts first: a library that took both
				// ids for 9007199254740992 would cancel the later one.
				for _, c := range [][2]string{{"9007199254740993", "drop"}, {"9007199254740992", "keep"}} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, a := hp.post(call(c[0], c[1]))
						mu.Lock()
						answers = append(answers, a)
						mu.Unlock()
					}()
					<-started
				}
				hp.post(cancel)
				wg.Wait()
			}
			select {
			case got := <-ended:
				if got != "drop" {
					t.Fatalf("cancelled %q", got)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("notifications/cancelled did not reach the call")
			}
			if len(ended) != 0 {
				t.Fatal("the other call was cancelled too")
			}
			kept := false
			for _, a := range answers {
				kept = kept || strings.Contains(a, "done keep")
			}
			if !kept {
				t.Fatalf("the call not cancelled did not answer: %q", answers)
			}
		})
	}
}

// TestDepthLimitAtEveryDoor: a message nesting MaxDepth levels is served,
// one more is refused with -32600 naming the limit, under its own id,
// before anything decodes it.
func TestDepthLimitAtEveryDoor(t *testing.T) {
	e, _ := newEngine(t)
	// The envelope takes three levels: message, params, arguments.
	msg := func(depth int) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nx_task_add","arguments":{"title":"t","context":"c","deps":` +
			strings.Repeat("[", depth-3) + strings.Repeat("]", depth-3) + `}}}`
	}
	for _, door := range []string{"stdio", "http"} {
		for _, depth := range []int{jsonscan.MaxDepth, jsonscan.MaxDepth + 1, 10000} {
			t.Run(fmt.Sprintf("%s/%d", door, depth), func(t *testing.T) {
				var answer string
				if door == "http" {
					_, answer = newHTTPPeer(t, e).post(msg(depth))
				} else {
					answer = serveRaw(t, e, msg(depth)+"\n")[0]
				}
				if idOf(t, answer) != "7" {
					t.Fatalf("answer %.300s is not under id 7", answer)
				}
				refused := strings.Contains(answer, `"code":-32600`) && strings.Contains(answer, "limit of 64 levels")
				if refused != (depth > jsonscan.MaxDepth) {
					t.Fatalf("depth %d: %.400s", depth, answer)
				}
				if !refused && !strings.Contains(answer, `must be an integer`) {
					// At the limit the message is read: deps[0] is an array, not an integer.
					t.Fatalf("depth %d: the tool did not judge the arguments: %.400s", depth, answer)
				}
			})
		}
	}
}

// TestPluginToolUnknownParameterRefusedUnread (issue 22.10, 26.11): a
// plugin tool refuses an unknown parameter listing the ones it takes, like
// nexus's own tools, and an unknown parameter holding a 1,000,000-item
// array is refused without being decoded.
func TestPluginToolUnknownParameterRefusedUnread(t *testing.T) {
	e, _ := newEngine(t)
	calls := 0
	e.Register(pluginTool("check_decision", []string{}, func(context.Context, map[string]any) (*tools.Result, error) {
		calls++
		return &tools.Result{Text: "ok"}, nil
	}))
	huge := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"check_decision","arguments":{"approach":"x","bogus":[` +
		strings.TrimSuffix(strings.Repeat("1,", 1000000), ",") + `]}}}` + "\n"
	in := req(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}}) + huge
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	lines := serveRaw(t, e, in)
	runtime.ReadMemStats(&after)
	if len(lines) != 2 || !strings.Contains(lines[1], `unknown parameter \\\"bogus\\\" (this tool takes: approach, limit)`) || calls != 0 {
		t.Fatalf("answer %.400s, %d plugin calls", lines[len(lines)-1], calls)
	}
	// The 2 MB line is read into a buffer and the body handed to the
	// library without the arguments; decoding the array would allocate
	// some 50 MB more.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 24<<20 {
		t.Errorf("refusing the call allocated %d MB", alloc>>20)
	}
}

// TestRefusalsKeepTheirPlace: a refused message is answered in order with
// the others on the in-order lane.
func TestRefusalsKeepTheirPlace(t *testing.T) {
	e, _ := newEngine(t)
	in := req(1, "ping", nil) + `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":` + nested(100) + `}}` + "\n" + req(3, "ping", nil)
	lines := serveRaw(t, e, in)
	var ids []string
	for _, l := range lines {
		ids = append(ids, idOf(t, l))
	}
	if strings.Join(ids, ",") != "1,2,3" {
		t.Fatalf("answers in order %v", ids)
	}
}

// BenchmarkEdge: what the edge costs a 1 MiB tool call.
func BenchmarkEdge(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nx_artifact_write","arguments":{"filename":"a.md","content":"` +
		strings.Repeat(`x\"[{`, 1<<18) + `"}}}`)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, refused := readMessage(msg); refused != nil {
			b.Fatal(refused)
		}
	}
}

// A broken message is answered under its id only when that id is whole
// and valid JSON: an answer is never invalid JSON.
func TestBrokenMessagesKeepValidIDs(t *testing.T) {
	e, _ := newEngine(t)
	for _, c := range []struct{ msg, id string }{
		{`{"jsonrpc":"2.0","id":-x,"method":"ping","params":` + nested(70) + `}`, "null"},
		{`{"jsonrpc":"2.0","id":"a\"b","method":"ping","params":` + nested(70) + `}`, `"a\"b"`},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, "null"},
		{`{"jsonrpc":"2.0","id":1,"ID":2,"method":"ping"}`, "null"},
	} {
		lines := serveRaw(t, e, c.msg+"\n")
		if len(lines) != 1 || !json.Valid([]byte(lines[0])) || idOf(t, lines[0]) != c.id || !strings.Contains(lines[0], `"error"`) {
			t.Errorf("%s: answered %q, want an error under id %s", c.msg, lines, c.id)
		}
	}
}
