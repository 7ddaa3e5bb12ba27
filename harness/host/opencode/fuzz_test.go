package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// FuzzCodec feeds request lines through DecodeRequest, Decode and Encode
// on one codec (its record carries over between inputs): nothing panics,
// every event it makes is valid, a request it cannot read is an
// *InputError, and the reply carries the request's id.
func FuzzCodec(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "sessions", "*.jsonl"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"v":1,"id":3,"hook":"chat.message","pid":1,"input":{"sessionID":"s"},"output":{"parts":[{"type":"text","synthetic":true,"text":"<task id=\"k\" state=\"error\">\n<task_error>\nx\n</task_error>"}]}}`))
	f.Add([]byte(`{"v":1,"id":4,"hook":"tool.execute.before","input":{"tool":"nexus_nx_task_add","sessionID":"s"},"output":{"args":{"n":1e999}}}`))
	c := NewCodec(nil)
	f.Fuzz(func(t *testing.T, line []byte) {
		req, err := DecodeRequest(line)
		if err != nil {
			return
		}
		evs, err := c.Decode(context.Background(), req)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Decode error %T: %v", err, err)
			}
			return
		}
		replies := make([]lifecycle.Reply, len(evs))
		for i, ev := range evs {
			if err := ev.Validate(); err != nil {
				t.Fatalf("invalid event %+v: %v", ev, err)
			}
			replies[i] = lifecycle.Reply{Context: ev.Name, Decision: "deny", Reason: ev.Tool}
		}
		rep := c.Encode(req, replies)
		if rep.ID != req.ID {
			t.Fatalf("reply id %d for request %d", rep.ID, req.ID)
		}
		if rep.Block != "" && req.Hook != HookToolBefore {
			t.Fatalf("%s blocked", req.Hook)
		}
	})
}

// FuzzServe: whatever arrives, Serve answers each non-blank line once, in
// order, with a line of JSON.
func FuzzServe(f *testing.F) {
	f.Add([]byte("{\"v\":1,\"id\":1,\"hook\":\"x\"}\n\n{\"v\":1,\"id\":2,\"hook\":\"y\"}"))
	f.Add([]byte("[\n{\"id\":5\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if err := Serve(context.Background(), bytes.NewReader(in), &out, echoHook); err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		want := 0
		for _, l := range bytes.Split(in, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				want++
			}
		}
		got := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
		if out.Len() == 0 {
			got = nil
		}
		if len(got) != want {
			t.Fatalf("%d replies for %d lines", len(got), want)
		}
		for _, l := range got {
			var r Reply
			if json.Unmarshal(l, &r) != nil {
				t.Fatalf("reply %q is not JSON", l)
			}
		}
	})
}
