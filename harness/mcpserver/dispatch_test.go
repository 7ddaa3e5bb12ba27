package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/tools"
)

// stdioPeer drives ServeStdioWith over pipes, one message at a time.
type stdioPeer struct {
	t    *testing.T
	in   *io.PipeWriter
	out  chan map[string]any
	done chan error
}

func newStdioPeer(t *testing.T, e Engine, o StdioOptions) *stdioPeer {
	t.Helper()
	s := newServer(t, e, "nx_")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, out: make(chan map[string]any, 64), done: make(chan error, 1)}
	go func() {
		err := ServeStdioWith(context.Background(), s, inR, outW, o)
		outW.Close()
		p.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("output line is not one JSON message: %q", sc.Text())
				continue
			}
			p.out <- m
		}
		close(p.out)
	}()
	t.Cleanup(func() { inW.Close() })
	return p
}

func (p *stdioPeer) send(msg string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, msg); err != nil {
		p.t.Fatal(err)
	}
}

// next returns the next answer, failing after d.
func (p *stdioPeer) next(d time.Duration) map[string]any {
	p.t.Helper()
	select {
	case m, ok := <-p.out:
		if !ok {
			p.t.Fatal("the server closed its output")
		}
		return m
	case <-time.After(d):
		p.t.Fatalf("no answer within %s", d)
	}
	return nil
}

// finish closes the input and returns every answer still to come.
func (p *stdioPeer) finish() []map[string]any {
	p.t.Helper()
	p.in.Close()
	var rest []map[string]any
	for m := range p.out {
		rest = append(rest, m)
	}
	if err := <-p.done; err != nil {
		p.t.Fatalf("ServeStdioWith: %v", err)
	}
	return rest
}

func cancelNote(id int) string {
	return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + jsonInt(id) + `,"reason":"user"}}` + "\n"
}

func jsonInt(i int) string { b, _ := json.Marshal(i); return string(b) }

// blockingTool is a plugin-shaped tool that says it started (with the
// call's "approach" argument), waits for its context and reports when it
// saw it end.
func blockingTool(name string, started chan<- string, ended chan<- time.Time) *tools.Tool {
	return pluginTool(name, []string{}, func(ctx context.Context, args map[string]any) (*tools.Result, error) {
		approach, _ := args["approach"].(string)
		started <- approach
		<-ctx.Done()
		ended <- time.Now()
		return &tools.Result{Text: "ended: " + ctx.Err().Error(), IsError: true}, nil
	})
}

// A slow plugin call does not hold up other requests, and
// notifications/cancelled ends its context at once; the cancelled request
// gets no answer.
func TestStdioCancelsAParallelCall(t *testing.T) {
	e, _ := newEngine(t)
	started, ended := make(chan string, 4), make(chan time.Time, 4)
	e.Register(blockingTool("slow_wait", started, ended))
	p := newStdioPeer(t, e, StdioOptions{Parallel: ParallelTools(e)})
	p.send(req(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}}))
	p.next(5 * time.Second)
	p.send(req(2, "tools/call", map[string]any{"name": "slow_wait", "arguments": map[string]any{"approach": "x"}}))
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the slow call did not start")
	}
	// Meanwhile nexus's own tools answer.
	p.send(req(3, "tools/call", map[string]any{"name": "nx_plan_status", "arguments": map[string]any{}}))
	if m := p.next(5 * time.Second); m["id"] != float64(3) {
		t.Fatalf("answer while the slow call runs: %v", m)
	}
	sent := time.Now()
	p.send(cancelNote(2))
	select {
	case at := <-ended:
		if d := at.Sub(sent); d > time.Second {
			t.Errorf("the call's context ended %s after the notification", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("notifications/cancelled did not cancel the call")
	}
	p.send(req(4, "ping", nil))
	rest := p.finish()
	if len(rest) != 1 || rest[0]["id"] != float64(4) {
		t.Fatalf("after the cancellation the server answered %v, want only the ping (no answer to a cancelled request)", rest)
	}
}

// Parallel calls are bounded by Workers; a cancelled call waiting for a
// worker never starts.
func TestStdioBoundsParallelCalls(t *testing.T) {
	e, _ := newEngine(t)
	started, ended := make(chan string, 8), make(chan time.Time, 8)
	e.Register(blockingTool("slow_wait", started, ended))
	p := newStdioPeer(t, e, StdioOptions{Parallel: ParallelTools(e), Workers: 2})
	for id := 1; id <= 3; id++ {
		p.send(req(id, "tools/call", map[string]any{"name": "slow_wait", "arguments": map[string]any{"approach": jsonInt(id)}}))
	}
	next := func(what string) string {
		t.Helper()
		select {
		case id := <-started:
			return id
		case <-time.After(5 * time.Second):
			t.Fatalf("%s never started", what)
			return ""
		}
	}
	end := func() {
		t.Helper()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatal("a cancelled call's context did not end")
		}
	}
	// Which two calls get the workers is up to the scheduler.
	running := map[string]bool{next("a first call"): true, next("a second call"): true}
	select {
	case id := <-started:
		t.Fatalf("a third call (%s) started with two workers busy", id)
	case <-time.After(100 * time.Millisecond):
	}
	var waiting string
	for id := 1; id <= 3; id++ {
		if !running[jsonInt(id)] {
			waiting = jsonInt(id)
		}
	}
	for id := range running {
		n, _ := strconv.Atoi(id)
		p.send(cancelNote(n))
		break
	}
	end()
	if id := next("the waiting call"); id != waiting { // it got the freed worker
		t.Fatalf("call %s started after a cancellation, want the waiting call %s", id, waiting)
	}
	p.send(cancelNote(1))
	p.send(cancelNote(2))
	p.send(cancelNote(3))
	end()
	end()
	if rest := p.finish(); len(rest) != 0 {
		t.Fatalf("answers to cancelled requests: %v", rest)
	}
}

// Without Parallel, a call still runs under its own context: cancelling it
// ends it, and the server answers what comes next, in order.
func TestStdioCancelsASerialCall(t *testing.T) {
	e, _ := newEngine(t)
	started, ended := make(chan string, 1), make(chan time.Time, 1)
	e.Register(blockingTool("slow_wait", started, ended))
	var calls atomic.Int32
	p := newStdioPeer(t, e, StdioOptions{Parallel: func(string) bool { calls.Add(1); return false }})
	p.send(req(1, "tools/call", map[string]any{"name": "slow_wait", "arguments": map[string]any{"approach": "x"}}))
	<-started
	p.send(req(2, "ping", nil))
	p.send(cancelNote(1))
	<-ended
	rest := p.finish()
	if len(rest) != 1 || rest[0]["id"] != float64(2) || calls.Load() == 0 {
		t.Fatalf("answers %v", rest)
	}
	if !strings.Contains(jsonText(rest[0]), `"result"`) {
		t.Fatalf("ping: %v", rest[0])
	}
}

func jsonText(m map[string]any) string { b, _ := json.Marshal(m); return string(b) }
