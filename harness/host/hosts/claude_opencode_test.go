package hosts_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/claude"
	"github.com/nexus-harness/nexus/harness/host/opencode"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/memory"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

// coRun is one project that Claude Code (harness id nexus) and OpenCode
// (harness id opencode) work in at the same time.
type coRun struct {
	t       *testing.T
	proj    string
	core    *vocabulary.Core
	schemas *schema.Set

	mu    sync.Mutex
	errs  []string
	added map[string]int // task titles acknowledged by task_add
}

func (w *coRun) fail(format string, a ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errs = append(w.errs, fmt.Sprintf(format, a...))
}

// harness builds an engine for one harness id, as a process of that host
// would (each Claude Code hook is a process; OpenCode's child keeps one).
func (w *coRun) harness(id string) (*harness.Engine, error) {
	return harness.New(harness.Options{Project: w.proj, HarnessID: id, Core: w.core, Schemas: w.schemas, Gate: gate.Options{ToolPrefix: "nx_"}})
}

func (w *coRun) engine(id string, p lifecycle.HostProfile) func(context.Context, lifecycle.Event) (*lifecycle.Engine, error) {
	return func(context.Context, lifecycle.Event) (*lifecycle.Engine, error) {
		he, err := w.harness(id)
		if err != nil {
			return nil, err
		}
		mem, err := memory.New(memory.Options{Store: he.Store, Policy: w.core.MemoryPolicy(), ToolPrefix: "nx_"})
		if err != nil {
			return nil, err
		}
		return lifecycle.New(lifecycle.Options{Store: he.Store, Core: w.core, ToolPrefix: "nx_", Host: p, Tools: he, ToolClasses: he.ToolClasses(), Memory: mem}), nil
	}
}

// tool runs a nexus tool as a host's MCP server would (a process of its
// own, under the host's harness id).
func (w *coRun) tool(id, name string, args map[string]any) (map[string]any, error) {
	he, err := w.harness(id)
	if err != nil {
		return nil, err
	}
	res, err := he.CallTool(context.Background(), name, args)
	if err == nil && res["error"] != nil {
		err = fmt.Errorf("%v", res["error"])
	}
	if err == nil && name == "task_add" {
		w.mu.Lock()
		w.added[args["title"].(string)]++
		w.mu.Unlock()
	}
	return res, err
}

// checkTracker validates a harness's tracker (when there is one) against
// nexus-core's schema and checks that it holds that harness's agents only.
func (w *coRun) checkTracker(id, step string) {
	b, err := os.ReadFile(filepath.Join(w.proj, ".nexus", "state", id, "agent-tracker.json"))
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		w.fail("%s %s: tracker: %v", id, step, err)
		return
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		w.fail("%s %s: tracker is not JSON: %v", id, step, err)
		return
	}
	if ps, err := w.schemas.Validate(schema.StateTracker, v); err != nil || len(ps) > 0 {
		w.fail("%s %s: tracker does not match the schema: %v %v", id, step, err, ps)
	}
	var entries []state.TrackerEntry
	_ = json.Unmarshal(b, &entries)
	for _, e := range entries {
		if e.HarnessID != id {
			w.fail("%s %s: tracker holds an entry of harness %q: %+v", id, step, e.HarnessID, e)
		}
	}
}

// claudeSession replays Claude Code's recorded session
// (harness/host/claude/testdata/session): each hook a fresh engine, as a
// hook process; the MCP server's calls under harness id nexus.
func (w *coRun) claudeSession(round int) {
	dir, _ := filepath.Abs(filepath.Join("..", "claude", "testdata", "session"))
	files, _ := filepath.Glob(filepath.Join(dir, "[0-9][0-9]-*.json"))
	sort.Strings(files)
	if len(files) == 0 {
		w.fail("claude: no recorded payloads in %s", dir)
		return
	}
	projJSON, _ := json.Marshal(w.proj)
	profile := claude.Host{}.Profile(host.Env{Project: w.proj})
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			w.fail("claude: %v", err)
			return
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		payload := strings.ReplaceAll(string(raw), "{{PROJECT}}", strings.Trim(string(projJSON), `"`))
		payload = strings.ReplaceAll(payload, "{{TESTDATA}}", dir)
		if strings.Contains(name, "-mcp-") {
			var call struct {
				Tool string         `json:"mcp_tool"`
				Args map[string]any `json:"args"`
			}
			_ = json.Unmarshal([]byte(payload), &call)
			if call.Tool == "task_add" {
				call.Args["title"] = fmt.Sprintf("claude session %d: %v", round, call.Args["title"])
			}
			if _, err := w.tool("nexus", call.Tool, call.Args); err != nil {
				w.fail("claude %s: %v", name, err)
			}
			continue
		}
		var out, stderr bytes.Buffer
		r := host.Runner{Codec: claude.Host{}.Codec(), Engine: w.engine("nexus", profile), Policy: func() string { return "fail-closed" }, Stderr: &stderr}
		r.Run(context.Background(), strings.NewReader(payload), &out)
		if stderr.Len() > 0 {
			w.fail("claude %s: %s", name, stderr.String())
		}
		// The architect's edits are refused whatever the other host does.
		if strings.Contains(name, "architect-edit-denied") && !strings.Contains(out.String(), `"deny"`) {
			w.fail("claude %s: the architect's edit was not denied: %s", name, out.String())
		}
		w.checkTracker("nexus", name)
	}
}

// openCodeSession replays OpenCode's recorded session
// (harness/host/opencode/testdata/sessions/tools.jsonl) through one
// long-lived child, as the plugin drives it; the MCP server's calls under
// harness id opencode.
func (w *coRun) openCodeSession(round int) {
	b, err := os.ReadFile(filepath.Join("..", "opencode", "testdata", "sessions", "tools.jsonl"))
	if err != nil {
		w.fail("opencode: %v", err)
		return
	}
	d, _ := json.Marshal(w.proj)
	b = bytes.ReplaceAll(b, []byte(`"/home/user/proj`), d[:len(d)-1])
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	r := host.Runner{Engine: w.engine("opencode", opencode.Host{}.Profile(host.Env{Project: w.proj})), Policy: func() string { return "fail-closed" }, Stderr: &stderr}
	go func() {
		err := opencode.Host{}.ServeHooks(context.Background(), inR, outW, r, true)
		outW.Close()
		done <- err
	}()
	replies := bufio.NewReader(outR)
	for _, line := range bytes.SplitAfter(bytes.TrimSpace(b), []byte("\n")) {
		req, err := opencode.DecodeRequest(line)
		if err != nil {
			w.fail("opencode: %v", err)
			break
		}
		if _, err := inW.Write(append(bytes.TrimSpace(line), '\n')); err != nil {
			w.fail("opencode: %v", err)
			break
		}
		out, err := replies.ReadBytes('\n')
		var rep opencode.Reply
		if err != nil || json.Unmarshal(out, &rep) != nil || rep.ID != req.ID || rep.Error != "" {
			w.fail("opencode request %d (%s): reply %q (%v)", req.ID, req.Hook, out, err)
		}
		if req.ID == 13 {
			title := fmt.Sprintf("opencode session %d: design the store", round)
			if _, err := w.tool("opencode", "task_add", map[string]any{"title": title, "context": "two hosts", "owner": "architect"}); err != nil {
				w.fail("opencode task_add: %v", err)
			}
		}
		w.checkTracker("opencode", fmt.Sprintf("request %d", req.ID))
	}
	inW.Close()
	if err := <-done; err != nil {
		w.fail("opencode ServeHooks: %v", err)
	}
	if stderr.Len() > 0 {
		w.fail("opencode: %s", stderr.String())
	}
}

// TestClaudeCodeAndOpenCodeOneProject: Claude Code's and OpenCode's hook streams
// (recorded from real sessions) and both hosts' MCP calls run at once
// against one project, three rounds: every tracker matches the schema and
// holds its own harness's agents only, plan.json, tasks.json and
// history.json stay valid and hold every task either host added exactly
// once (the shared files' locks hold), and each namespace's memory access
// log counts its own host's reads alone.
func TestClaudeCodeAndOpenCodeOneProject(t *testing.T) {
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	proj, _ := filepath.EvalSymlinks(t.TempDir())
	w := &coRun{t: t, proj: proj, core: core, schemas: schema.NewCoreSet(core.Dir), added: map[string]int{}}
	for _, f := range []string{".nexus/memory/pattern-http-caching.md", ".nexus/memory/lesson.md"} {
		p := filepath.Join(proj, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# note\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const rounds, adds = 3, 15
	for round := range rounds {
		var wg sync.WaitGroup
		wg.Add(4)
		go func() { defer wg.Done(); w.claudeSession(round) }()
		go func() { defer wg.Done(); w.openCodeSession(round) }()
		for _, id := range []string{"nexus", "opencode"} {
			go func() {
				defer wg.Done()
				for i := range adds {
					if _, err := w.tool(id, "task_add", map[string]any{"title": fmt.Sprintf("%s %d.%d", id, round, i), "context": "two hosts"}); err != nil {
						w.fail("%s task_add: %v", id, err)
					}
				}
			}()
		}
		wg.Wait()
	}
	for _, e := range w.errs {
		t.Error(e)
	}

	// Every acknowledged task once, across tasks.json and the cycles
	// plan_start archived.
	seen := map[string]int{}
	validate := func(rel, schemaName string) []byte {
		b, err := os.ReadFile(filepath.Join(proj, ".nexus", rel))
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if ps, err := w.schemas.Validate(schemaName, v); err != nil || len(ps) > 0 {
			t.Errorf("%s does not match its schema: %v %v", rel, err, ps)
		}
		return b
	}
	var tasks struct {
		Tasks []struct {
			ID    int    `json:"id"`
			Title string `json:"title"`
		} `json:"tasks"`
	}
	_ = json.Unmarshal(validate("state/tasks.json", schema.StateTasks), &tasks)
	ids := map[int]bool{}
	for _, tk := range tasks.Tasks {
		seen[tk.Title]++
		if ids[tk.ID] {
			t.Errorf("task id %d twice in tasks.json", tk.ID)
		}
		ids[tk.ID] = true
	}
	validate("state/plan.json", schema.StatePlan)
	var history struct {
		Cycles []struct {
			Tasks []struct {
				Title string `json:"title"`
			} `json:"tasks"`
		} `json:"cycles"`
	}
	_ = json.Unmarshal(validate("history.json", schema.StateHistory), &history)
	for _, c := range history.Cycles {
		for _, tk := range c.Tasks {
			seen[tk.Title]++
		}
	}
	if len(w.added) != rounds*(2*adds+2) {
		t.Errorf("%d tasks acknowledged, want %d", len(w.added), rounds*(2*adds+2))
	}
	for title, n := range w.added {
		if seen[title] != n {
			t.Errorf("task %q acknowledged %d times, stored %d times", title, n, seen[title])
		}
	}
	// Memory reads: Claude Code's session reads pattern-http-caching.md
	// once a round; OpenCode's reads lesson.md twice (read, then cat).
	for id, want := range map[string]map[string]int{"nexus": {"pattern-http-caching.md": rounds}, "opencode": {"lesson.md": 2 * rounds}} {
		b, err := os.ReadFile(filepath.Join(proj, ".nexus", "state", id, "memory-access.jsonl"))
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		got := map[string]int{}
		for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var rec struct {
				Path        string `json:"path"`
				AccessCount int    `json:"access_count"`
			}
			if err := json.Unmarshal(line, &rec); err != nil {
				t.Errorf("%s memory-access line %q: %v", id, line, err)
			}
			got[filepath.Base(rec.Path)] = rec.AccessCount
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s memory-access.jsonl counts %v, want %v", id, got, want)
		}
	}
	// Each session ended: neither tracker is left.
	for _, id := range []string{"nexus", "opencode"} {
		if _, err := os.Stat(filepath.Join(proj, ".nexus", "state", id, "agent-tracker.json")); err == nil {
			t.Errorf("%s's tracker survived its session's end", id)
		}
	}
}
