// fakenexus stands in for nexus behind the generated OpenCode plugin in
// the e2e tests: it speaks the plugin's wire protocol through
// opencode.Serve (the server side nexus uses) with scripted answers
// instead of the lifecycle engine. Run with --serve it is the long-lived
// child; without, the one-process-per-hook fallback. Every request is
// logged to $FAKE_NEXUS_LOG as one JSON line {pid, mode, id, hook, req}.
//
// Answers: tool.execute.before whose request holds BLOCKME is blocked;
// CRASHCHILD makes the long-lived child exit without answering (the
// fallback answers it); SLOWME makes any process wait 3 s first;
// chat.message gets a synthetic part naming the session; tool.execute.after
// gets FAKE-APPEND added to the result. With $FAKE_NEXUS_CODEC set, the
// real codec decodes each request instead (no engine: every event gets an
// empty reply), so a timing covers the transport and the codec.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/harness/host/opencode"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

func main() {
	mode := "once"
	if slices.Contains(os.Args[1:], "--serve") {
		mode = "serve"
	}
	var mu sync.Mutex
	logf, err := os.OpenFile(os.Getenv("FAKE_NEXUS_LOG"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var codec *opencode.Codec
	if os.Getenv("FAKE_NEXUS_CODEC") != "" {
		codec = opencode.NewCodec(nil)
	}
	handle := func(ctx context.Context, req opencode.Request) (opencode.Reply, error) {
		line, _ := opencode.EncodeRequest(req)
		rec, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "mode": mode, "id": req.ID, "hook": req.Hook, "req": json.RawMessage(bytes.TrimSpace(line))})
		mu.Lock()
		logf.Write(append(rec, '\n'))
		mu.Unlock()
		if bytes.Contains(line, []byte("CRASHCHILD")) && mode == "serve" {
			os.Exit(3)
		}
		if bytes.Contains(line, []byte("SLOWME")) {
			time.Sleep(3 * time.Second)
		}
		if codec != nil {
			return codec.Handle(ctx, req, func(context.Context, lifecycle.Event) (lifecycle.Reply, error) { return lifecycle.Reply{}, nil })
		}
		switch req.Hook {
		case opencode.HookToolBefore:
			if bytes.Contains(line, []byte("BLOCKME")) {
				return opencode.Reply{Block: "fake nexus blocked the call (" + mode + ")"}, nil
			}
		case opencode.HookChatMessage:
			var in struct {
				SessionID string `json:"sessionID"`
			}
			json.Unmarshal(req.Input, &in)
			return opencode.Reply{Parts: []string{"FAKE-CONTEXT for " + in.SessionID}}, nil
		case opencode.HookToolAfter:
			return opencode.Reply{Append: "FAKE-APPEND (" + mode + ")"}, nil
		}
		return opencode.Reply{}, nil
	}
	if err := opencode.Serve(context.Background(), os.Stdin, os.Stdout, handle); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
