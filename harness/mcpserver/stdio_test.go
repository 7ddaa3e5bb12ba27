package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

func serveLines(t *testing.T, input string) []map[string]any {
	t.Helper()
	e, _ := newEngine(t)
	var out bytes.Buffer
	done := make(chan error, 1)
	s := newServer(t, e, "nx_")
	go func() { done <- ServeStdio(context.Background(), s, strings.NewReader(input), &out) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio did not return at end of input")
	}
	var msgs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line is not one JSON message: %q", line)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func req(id int, method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b) + "\n"
}

func TestStdioAnswersInRequestOrder(t *testing.T) {
	var in strings.Builder
	in.WriteString(req(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}}))
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	in.WriteString("\n   \n") // blank lines are skipped
	id := 2
	var want []int
	want = append(want, 1)
	for i := 0; i < 40; i++ {
		switch i % 4 {
		case 0:
			in.WriteString(req(id, "tools/call", map[string]any{"name": "nx_task_add", "arguments": map[string]any{"title": fmt.Sprint("t", i), "context": "c"}}))
		case 1:
			in.WriteString(req(id, "tools/list", nil))
		case 2:
			in.WriteString(req(id, "tools/call", map[string]any{"name": "nx_task_update", "arguments": map[string]any{"id": i/4 + 1, "status": "completed"}}))
		case 3:
			in.WriteString(req(id, "ping", nil))
		}
		want = append(want, id)
		id++
	}
	// A reply to a server request and the last line without a newline.
	in.WriteString(`{"jsonrpc":"2.0","id":"srv-1","result":{}}` + "\n")
	last := strings.TrimSuffix(req(id, "tools/call", map[string]any{"name": "nx_task_list"}), "\n")
	in.WriteString(last)
	want = append(want, id)

	msgs := serveLines(t, in.String())
	if len(msgs) != len(want) {
		t.Fatalf("%d answers, want %d", len(msgs), len(want))
	}
	for i, m := range msgs {
		if got, _ := m["id"].(float64); int(got) != want[i] {
			t.Fatalf("answer %d has id %v, want %d (answers must keep request order)", i, m["id"], want[i])
		}
		if m["error"] != nil {
			t.Fatalf("answer %d is an error: %v", i, m["error"])
		}
	}
	final := msgs[len(msgs)-1]["result"].(map[string]any)["structuredContent"].(map[string]any)
	summary := final["summary"].(map[string]any)
	if summary["total"] != 10.0 || summary["completed"] != 10.0 {
		t.Fatalf("final task list summary = %v, want 10 tasks all completed", summary)
	}
}

func TestStdioProtocolVersions(t *testing.T) {
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", mcp.LATEST_PROTOCOL_VERSION, "2099-01-01"} {
		msgs := serveLines(t, req(1, "initialize", map[string]any{"protocolVersion": v, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}})+
			req(2, "tools/list", nil))
		if len(msgs) != 2 {
			t.Fatalf("%s: %d answers", v, len(msgs))
		}
		res, _ := msgs[0]["result"].(map[string]any)
		got, _ := res["protocolVersion"].(string)
		want := v
		if v >= mcp.ProtocolVersion20260728 {
			want = mcp.LATEST_LEGACY_PROTOCOL_VERSION // initialize cannot negotiate the stateless era
		}
		if got != want {
			t.Errorf("initialize %s answered %q, want %q", v, got, want)
		}
		tools, _ := msgs[1]["result"].(map[string]any)["tools"].([]any)
		if len(tools) != 11 {
			t.Errorf("%s: tools/list has %d tools", v, len(tools))
		}
	}
}

func TestStdioBadInput(t *testing.T) {
	msgs := serveLines(t, "{not json\n"+
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`+"\n"+
		`{"jsonrpc":"1.0","id":2,"method":"ping"}`+"\n"+
		req(3, "no/such/method", nil)+
		req(4, "ping", nil))
	if len(msgs) != 5 {
		t.Fatalf("%d answers, want 5: %v", len(msgs), msgs)
	}
	codes := []float64{mcp.PARSE_ERROR, mcp.INVALID_REQUEST, mcp.INVALID_REQUEST, mcp.METHOD_NOT_FOUND}
	for i, code := range codes {
		e, _ := msgs[i]["error"].(map[string]any)
		if e["code"] != code {
			t.Errorf("answer %d = %v, want error %v", i, msgs[i], code)
		}
	}
	if msgs[4]["error"] != nil || msgs[4]["id"] != 4.0 {
		t.Errorf("the server did not recover: %v", msgs[4])
	}
}

func TestStdioStopsOnCancel(t *testing.T) {
	e, _ := newEngine(t)
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out bytes.Buffer
	s := newServer(t, e, "nx_")
	go func() { done <- ServeStdio(ctx, s, pr, &out) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio ignored cancellation while stdin was open")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestStdioWriteFailureEndsServing(t *testing.T) {
	e, _ := newEngine(t)
	err := ServeStdio(context.Background(), newServer(t, e, "nx_"), strings.NewReader(req(1, "ping", nil)+req(2, "ping", nil)), failWriter{})
	if err == nil || !strings.Contains(err.Error(), "write") {
		t.Fatalf("err = %v, want a write error", err)
	}
}

// writeLine is what lineWriter writes for one message.
func writeLine(t *testing.T, msg any) []byte {
	t.Helper()
	var out bytes.Buffer
	l := &lineWriter{w: bufio.NewWriterSize(&out, 4096)}
	l.write(msg)
	if err := l.err(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// A large answer is written in parts (the text quoted a piece at a time):
// the line is encodeMessage's, whatever characters straddle the pieces'
// edges, and a text that is not UTF-8 is encoded whole as before.
func TestLineWriterLargeAnswer(t *testing.T) {
	var b strings.Builder
	for b.Len() < 3*quoteChunk+100 {
		b.WriteString(`{"t":"é\"\\<x>\u0001",` + "\"€😀\":[1,2]},")
	}
	// A four-byte character across the first piece's edge.
	straddle := strings.Repeat("a", quoteChunk-2) + "😀\"" + b.String()
	for _, text := range []string{b.String(), straddle, b.String()[1:], "ok\xffbad" + b.String()} {
		msg := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(3), &mcp.CallToolResult{
			Content: []mcp.Content{mcp.NewTextContent(text)}, RawStructuredContent: json.RawMessage(`{"a":1}`)})
		want, err := encodeMessage(nil, msg)
		if err != nil {
			t.Fatal(err)
		}
		if got := writeLine(t, msg); !bytes.Equal(got, append(want, '\n')) {
			t.Fatalf("lineWriter and encodeMessage differ (text of %d bytes)", len(text))
		}
	}
}

// The direct encoding of tool answers says what encoding/json says.
func TestEncodeMessageMatchesEncodingJSON(t *testing.T) {
	text := `{"a":"<b> & \"c\"\n","é":[1,2.5,null]}`
	cases := map[string]any{
		"tool result": mcp.NewJSONRPCResultResponse(mcp.NewRequestId(7), &mcp.CallToolResult{
			Content: []mcp.Content{mcp.NewTextContent(text)}, RawStructuredContent: json.RawMessage(text)}),
		"tool error, string id": mcp.NewJSONRPCResultResponse(mcp.NewRequestId("x\"y"), &mcp.CallToolResult{
			Content: []mcp.Content{mcp.NewTextContent(`{"error":"no"}`)}, RawStructuredContent: json.RawMessage(`{"error":"no"}`), IsError: true}),
		"pretty structured content": mcp.NewJSONRPCResultResponse(mcp.NewRequestId(1), &mcp.CallToolResult{
			Content: []mcp.Content{mcp.NewTextContent("t")}, RawStructuredContent: json.RawMessage("{\n \"a\": 1\n}")}),
		"other result": mcp.NewJSONRPCResultResponse(mcp.NewRequestId(2), map[string]any{"tools": []any{}}),
	}
	for name, msg := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := encodeMessage(nil, msg)
			if err != nil {
				t.Fatal(err)
			}
			// A buffer that held an earlier message: the new one must not
			// depend on it.
			dirty := bytes.Repeat([]byte(`{"x"`), 1000)
			if again, err := encodeMessage(dirty[:0], msg); err != nil || !bytes.Equal(again, got) {
				t.Fatalf("into a used buffer: %s (%v)\nwant %s", again, err, got)
			}
			if streamed := writeLine(t, msg); !bytes.Equal(streamed, append(got, '\n')) {
				t.Fatalf("lineWriter wrote %s\nwant %s", streamed, got)
			}
			want, _ := json.Marshal(msg)
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("not JSON: %s", got)
			}
			json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
			if bytes.ContainsAny(got, "\n\r") {
				t.Fatalf("a line break inside the message: %q", got)
			}
		})
	}
}
