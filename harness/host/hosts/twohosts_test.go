package hosts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/hosts"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/memory"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

// Two hosts, one project: a Claude Code session and a Codex session of
// nexus at the same time, each hook event handled as its own `nexus hook`
// process would (a fresh engine, the state's locks taken on the files).

// stream is one host's recorded session: its payloads in order, and the
// MCP calls its Lead made between them.
type stream struct {
	host    string
	id      string // harness id
	names   []string
	payload [][]byte
	// mcp is the nexus tool an entry runs instead of a hook ("" = a hook).
	mcp  []string
	args []map[string]any
}

// loadStream reads a host package's recorded session (testdata/session of
// harness/host/<host>), filling in the project.
func loadStream(t *testing.T, hostName, id, project string) *stream {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", hostName, "testdata", "session"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "[0-9][0-9]-*.json"))
	if len(files) == 0 {
		t.Fatalf("no recorded session in %s", dir)
	}
	sort.Strings(files)
	projJSON, _ := json.Marshal(project)
	s := &stream{host: hostName, id: id}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(raw), "{{PROJECT}}", strings.Trim(string(projJSON), `"`))
		text = strings.ReplaceAll(text, "{{TESTDATA}}", dir)
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		var call struct {
			Tool      string         `json:"mcp_tool"`
			Args      map[string]any `json:"args"`
			Event     string         `json:"hook_event_name"`
			ToolName  string         `json:"tool_name"`
			ToolInput map[string]any `json:"tool_input"`
		}
		if err := json.Unmarshal([]byte(text), &call); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// Codex's recording has the Lead's nx_task_add between its
		// PreToolUse and PostToolUse: run it as nexus mcp would.
		if hostName == "codex" && call.Event == "PostToolUse" && call.ToolName == "mcp__nexus__nx_task_add" {
			s.add(name+" (mcp)", nil, "task_add", call.ToolInput)
		}
		if call.Tool != "" {
			s.add(name, nil, call.Tool, call.Args)
			continue
		}
		s.add(name, []byte(text), "", nil)
	}
	return s
}

func (s *stream) add(name string, payload []byte, tool string, args map[string]any) {
	s.names, s.payload, s.mcp, s.args = append(s.names, name), append(s.payload, payload), append(s.mcp, tool), append(s.args, args)
}

type project struct {
	dir     string
	core    *vocabulary.Core
	schemas *schema.Set
}

func (p *project) harness(t *testing.T, id string) *harness.Engine {
	he, err := harness.New(harness.Options{
		Project: p.dir, HarnessID: id, Core: p.core, Schemas: p.schemas, Gate: gate.Options{ToolPrefix: "nx_"},
		Branch: func() string { return "main" },
	})
	if err != nil {
		t.Error(err)
		return nil
	}
	return he
}

// readsOnly is a memory handler that finds reads as nexus's does and
// records them nowhere (the memory lifecycle has its own tests).
type readsOnly struct{}

func (readsOnly) Observe(context.Context, string, string, time.Time) error { return nil }
func (readsOnly) SaveFromTag(context.Context, string) (string, error)      { return "saved", nil }
func (readsOnly) GCFromTag(context.Context, string) (string, error)        { return "", nil }
func (readsOnly) AutoGC(context.Context) (string, error)                   { return "", nil }
func (readsOnly) ReadsOf(tool string, input []byte, cwd string) []string {
	return memory.ReadPaths(tool, input, cwd)
}

// play runs a stream's events in order, each through the host's runner
// with a fresh engine, and keeps a copy of the host's tracker after every
// event that changes it.
func (p *project) play(t *testing.T, s *stream, trackers *[][]byte) {
	h, err := hosts.Lookup(s.host)
	if err != nil {
		t.Error(err)
		return
	}
	tracker := filepath.Join(p.dir, ".nexus", "state", s.id, "agent-tracker.json")
	for i, name := range s.names {
		ctx := context.Background()
		if s.mcp[i] != "" {
			he := p.harness(t, s.id)
			if he == nil {
				return
			}
			if res, err := he.CallTool(ctx, s.mcp[i], s.args[i]); err != nil || res["error"] != nil {
				t.Errorf("%s %s: %v %v", s.host, name, err, res["error"])
			}
			continue
		}
		engine := func(context.Context, lifecycle.Event) (*lifecycle.Engine, error) {
			he := p.harness(t, s.id)
			if he == nil {
				return nil, fmt.Errorf("no engine")
			}
			return lifecycle.New(lifecycle.Options{
				Store: he.Store, Core: he.Core, ToolPrefix: "nx_", Host: h.Profile(host.Env{Project: p.dir}),
				Tools: he, ToolClasses: he.ToolClasses(), Memory: readsOnly{},
			}), nil
		}
		var out, errb bytes.Buffer
		r := host.Runner{Codec: h.Codec(), Engine: engine, Policy: func() string { return "fail-closed" }, Stderr: &errb}
		r.Run(ctx, bytes.NewReader(s.payload[i]), &out)
		if errb.Len() > 0 {
			t.Errorf("%s %s: %s", s.host, name, errb.String())
		}
		if b, err := os.ReadFile(tracker); err == nil && (len(*trackers) == 0 || !bytes.Equal((*trackers)[len(*trackers)-1], b)) {
			*trackers = append(*trackers, b)
		}
	}
}

// TestTwoHostsOneProject replays Claude Code's and Codex's recorded
// sessions at the same time against one project, several times over (run
// it with -race): every tracker either host wrote matches the schema and
// holds only that host's agents under its harness id; both hosts' Lead
// tasks land in the one tasks.json; no lock is left held and no temporary
// file is left behind.
func TestTwoHostsOneProject(t *testing.T) {
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	schemas := schema.NewCoreSet(core.Dir)
	for round := range 5 {
		dir, _ := filepath.EvalSymlinks(t.TempDir())
		if err := os.MkdirAll(filepath.Join(dir, ".nexus", "memory"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".nexus", "memory", "pattern-http-caching.md"), []byte("# HTTP caching\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p := &project{dir: dir, core: core, schemas: schemas}
		streams := []*stream{loadStream(t, "claude", "nexus", dir), loadStream(t, "codex", "codex", dir)}
		trackers := make([][][]byte, len(streams))
		var wg sync.WaitGroup
		for i, s := range streams {
			wg.Go(func() { p.play(t, s, &trackers[i]) })
		}
		wg.Wait()

		agents := map[string]map[string]bool{}
		for i, s := range streams {
			agents[s.id] = map[string]bool{}
			if len(trackers[i]) == 0 {
				t.Fatalf("round %d: %s wrote no tracker", round, s.host)
			}
			for _, b := range trackers[i] {
				var v any
				if err := json.Unmarshal(b, &v); err != nil {
					t.Fatalf("round %d: %s tracker %s: %v", round, s.host, b, err)
				}
				if probs, err := schemas.Validate(schema.StateTracker, v); err != nil || len(probs) > 0 {
					t.Errorf("round %d: %s tracker does not match the schema: %v %v\n%s", round, s.host, probs, err, b)
				}
				var entries []state.TrackerEntry
				json.Unmarshal(b, &entries)
				for _, e := range entries {
					if e.HarnessID != s.id {
						t.Errorf("round %d: %s tracker holds %s under harness id %q", round, s.host, e.AgentID, e.HarnessID)
					}
					agents[s.id][e.AgentID] = true
				}
			}
		}
		for id := range agents["nexus"] {
			if agents["codex"][id] {
				t.Errorf("round %d: agent %s is in both trackers", round, id)
			}
		}
		if len(agents["nexus"]) != 2 || len(agents["codex"]) != 2 {
			t.Errorf("round %d: agents per host %v", round, agents)
		}
		tasks, err := os.ReadFile(filepath.Join(dir, ".nexus", "state", "tasks.json"))
		if err != nil || !strings.Contains(string(tasks), "cache the API responses") || !strings.Contains(string(tasks), `"owner": "engineer"`) {
			t.Errorf("round %d: tasks.json does not hold both hosts' tasks: %s %v", round, tasks, err)
		}
		// Locks: none held (each can be taken at once); no temporary files.
		filepath.WalkDir(filepath.Join(dir, ".nexus"), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if strings.Contains(d.Name(), ".tmp") {
				t.Errorf("round %d: temporary file left: %s", round, path)
			}
			return nil
		})
		st := state.New(mustLayout(t, dir), nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := st.Update(ctx, []string{st.L.PlanPath(), st.L.TasksPath(), st.L.HistoryPath()}, func(*state.Tx) error { return nil }); err != nil {
			t.Errorf("round %d: a shared lock is still held: %v", round, err)
		}
		cancel()
	}
}

func mustLayout(t *testing.T, dir string) state.Layout {
	l, err := state.NewLayout(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	return l
}
