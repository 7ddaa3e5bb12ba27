package opencode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// serveAll runs Serve over the given input and returns the reply lines.
func serveAll(t *testing.T, in string, h Handler) []Reply {
	t.Helper()
	var out bytes.Buffer
	if err := Serve(context.Background(), strings.NewReader(in), &out, h); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	var replies []Reply
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if l == "" {
			continue
		}
		var r Reply
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("reply line %q: %v", l, err)
		}
		replies = append(replies, r)
	}
	return replies
}

func echoHook(_ context.Context, req Request) (Reply, error) {
	return Reply{Parts: []string{req.Hook}}, nil
}

func TestServe(t *testing.T) {
	deep := `{"v":1,"id":9,"hook":"tool.execute.before","input":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`
	long := `{"v":1,"id":11,"hook":"chat.message","input":"` + strings.Repeat("x", MaxLine) + `"}`
	cases := []struct {
		name string
		in   string
		h    Handler
		want []Reply
	}{
		{"one request", `{"v":1,"id":1,"hook":"chat.message"}` + "\n", echoHook, []Reply{{ID: 1, Parts: []string{"chat.message"}}}},
		{"in order, blank lines skipped, last line without newline", "{\"v\":1,\"id\":1,\"hook\":\"a\"}\n\n\r\n{\"v\":1,\"id\":2,\"hook\":\"b\"}", echoHook,
			[]Reply{{ID: 1, Parts: []string{"a"}}, {ID: 2, Parts: []string{"b"}}}},
		{"the reply carries the request's id whatever the handler says", `{"v":1,"id":3,"hook":"x"}`, func(context.Context, Request) (Reply, error) { return Reply{ID: 99}, nil },
			[]Reply{{ID: 3}}},
		{"another protocol version", `{"v":2,"id":4,"hook":"x"}`, echoHook,
			[]Reply{{ID: 4, Error: "the OpenCode plugin speaks protocol 2 and this nexus speaks 1: run `nexus install opencode` again to rewrite the plugin"}}},
		{"no hook", `{"v":1,"id":5}`, echoHook, []Reply{{ID: 5, Error: "invalid request: no hook named"}}},
		{"not an object", `[1]`, echoHook, []Reply{{Error: "invalid request: expected one JSON object"}}},
		{"broken JSON keeps the id", `{"v":1,"id":6,"hook":`, echoHook, []Reply{{ID: 6, Error: "invalid request: unexpected EOF"}}},
		{"two values on a line", `{"v":1,"id":7,"hook":"x"} {}`, echoHook, []Reply{{ID: 7, Error: "invalid request: more than one JSON value on the line"}}},
		{"too deep", deep, echoHook, []Reply{{ID: 9, Error: "request refused: JSON nested deeper than the limit of 64 levels"}}},
		{"too long, then the next line", long + "\n" + `{"v":1,"id":12,"hook":"after"}` + "\n", echoHook,
			[]Reply{{ID: 11, Error: "the request is over 10 MiB; nexus reads at most 10485760 bytes"}, {ID: 12, Parts: []string{"after"}}}},
		{"handler error, folded onto one line", `{"v":1,"id":13,"hook":"x"}`, func(context.Context, Request) (Reply, error) { return Reply{}, errors.New("broken\n  twice") },
			[]Reply{{ID: 13, Error: "broken; twice"}}},
		{"handler panic", `{"v":1,"id":14,"hook":"x"}`, func(context.Context, Request) (Reply, error) { panic("boom") },
			[]Reply{{ID: 14, Error: "nexus failed handling the request: internal error: boom"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := serveAll(t, c.in, c.h)
			if len(got) != len(c.want) {
				t.Fatalf("got %d replies %+v, want %+v", len(got), got, c.want)
			}
			for i := range got {
				if got[i].Error != c.want[i].Error && strings.HasPrefix(got[i].Error, c.want[i].Error) {
					got[i].Error = c.want[i].Error // the decoder's detail after the part that matters
				}
				g, _ := json.Marshal(got[i])
				w, _ := json.Marshal(c.want[i])
				if !bytes.Equal(g, w) {
					t.Errorf("reply %d: %s, want %s", i, g, w)
				}
			}
		})
	}
}

// TestServeRoundTrip: what EncodeRequest writes, Serve reads back whole
// (the hook's arguments kept byte for byte).
func TestServeRoundTrip(t *testing.T) {
	req := Request{V: ProtocolVersion, ID: 42, Hook: HookToolBefore, PID: 7, Dir: "/p", Input: json.RawMessage(`{"tool":"bash","sessionID":"ses_1","callID":"c"}`), Output: json.RawMessage(`{"args":{"command":"echo \u2028 <x>"}}`)}
	line, err := EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	var got Request
	serveAll(t, string(line), func(_ context.Context, r Request) (Reply, error) { got = r; return Reply{}, nil })
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(req)
	if !bytes.Equal(g, w) {
		t.Errorf("read back %s, want %s", g, w)
	}
}

// TestServeEndsWithContext: a Serve blocked on a read returns when its
// context ends (the parent is gone), and one whose input ends returns nil.
func TestServeEndsWithContext(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() { done <- Serve(ctx, pr, &out, echoHook) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve returned %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}

	pr2, pw2 := io.Pipe()
	go func() { done <- Serve(context.Background(), pr2, io.Discard, echoHook) }()
	pw2.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve at end of input: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return at end of input")
	}
}

// TestServeAnswersBeforeNextRequest: the reply to a request is written
// before the next request is read (the plugin waits for it).
func TestServeAnswersBeforeNextRequest(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go Serve(context.Background(), inR, outW, echoHook)
	br := bufio.NewReader(outR)
	for i := 1; i <= 3; i++ {
		line, _ := EncodeRequest(Request{V: 1, ID: uint64(i), Hook: "h"})
		if _, err := inW.Write(line); err != nil {
			t.Fatal(err)
		}
		got, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var r Reply
		if json.Unmarshal([]byte(got), &r) != nil || r.ID != uint64(i) {
			t.Fatalf("request %d got %q", i, got)
		}
	}
	inW.Close()
}

func BenchmarkServe(b *testing.B) {
	line, _ := EncodeRequest(Request{V: 1, ID: 1, Hook: HookToolBefore, PID: 1, Dir: "/home/user/proj",
		Input: json.RawMessage(`{"tool":"read","sessionID":"ses_de4d0cfadffe7jfF5bi6IaLWgU","callID":"call_read"}`), Output: json.RawMessage(`{"args":{"filePath":".nexus/memory/lesson.md"}}`)})
	in := bytes.Repeat(line, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	if err := Serve(context.Background(), bytes.NewReader(in), io.Discard, func(context.Context, Request) (Reply, error) { return Reply{}, nil }); err != nil {
		b.Fatal(err)
	}
}
