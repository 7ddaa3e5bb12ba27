//go:build e2e

package codex

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	codexsetup "github.com/nexus-harness/nexus/harness/host/codex/setup"
	fr "github.com/nexus-harness/nexus/internal/fakeresponses"
)

// The end-to-end checks of nexus as Codex's harness: nexus installed in the
// project by `nexus install codex --trust-hooks`, real `codex exec`
// sessions against the fake Responses API.

// The nine roles of nexus-core 0.10.0.
var roles = []string{"architect", "designer", "engineer", "postdoc", "researcher", "reviewer", "strategist", "tester", "writer"}

const ns = "multi_agent_v1"

// isRole matches a request of the subagent of a role: its SubagentStart
// context names it. lead matches the Lead's requests.
func isRole(role string) fr.Matcher { return fr.DeveloperHas("nexus: you are the " + role + " agent") }

var lead = fr.Not(fr.DeveloperHas("nexus: you are the "))

type trackerEntry struct {
	HarnessID    string   `json:"harness_id"`
	AgentName    string   `json:"agent_name"`
	AgentID      string   `json:"agent_id"`
	Status       string   `json:"status"`
	ResumeCount  int      `json:"resume_count"`
	FilesTouched []string `json:"files_touched"`
}

// tracker reads Codex's agent tracker (.nexus/state/codex/), as a turn
// sees it while the session runs (SessionEnd deletes it).
func (s *session) tracker() []trackerEntry {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.proj, ".nexus/state/codex/agent-tracker.json"))
	if err != nil {
		s.t.Errorf("agent tracker: %v", err)
		return nil
	}
	var out []trackerEntry
	if err := json.Unmarshal(b, &out); err != nil {
		s.t.Errorf("agent tracker %s: %v", b, err)
	}
	return out
}

func entryOf(entries []trackerEntry, id string) trackerEntry {
	for _, e := range entries {
		if e.AgentID == id {
			return e
		}
	}
	return trackerEntry{}
}

// spawnedID reads the agent id spawn_agent returned for a call.
func spawnedID(t *testing.T, r *fr.ResponsesRequest, call string) string {
	t.Helper()
	out, _ := r.Output(call)
	m := agentIDRe.FindStringSubmatch(out.Output.Text())
	if m == nil {
		t.Errorf("spawn_agent %s gave no agent id: %q", call, out.Output.Text())
		return ""
	}
	return m[1]
}

// agentBody is a role's developer_instructions as nexus installed them.
func (s *session) agentBody(t *testing.T, role string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.proj, ".codex", "agents", role+".toml"))
	if err != nil {
		t.Fatalf("nexus install codex wrote no agent file for %s: %v", role, err)
	}
	a, err := codexsetup.ParseAgentTOML(b)
	if err != nil {
		t.Fatalf("agent file of %s: %v", role, err)
	}
	return a.Instructions
}

// TestE2ECodexRoles: every one of the nine roles nexus installs is offered
// to spawn_agent's agent_type, spawned by it, gets its body
// (developer_instructions) and nexus's brief (SubagentStart's context), and
// is tracked under its name by Codex's harness id: running while it works,
// completed once Lead's wait_agent returns, running again (resume_count 1,
// with its resume brief) when Lead sends it a follow-up with send_input
// (which fires no SubagentStart in Codex, only the subagent's
// UserPromptSubmit), and completed again after the second wait_agent.
func TestE2ECodexRoles(t *testing.T) {
	t.Parallel()
	var s *session
	var mu sync.Mutex
	// snapshot records each role's tracker entry as its turn sees it.
	snapshot := func(into map[string]trackerEntry, role string) {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range s.tracker() {
			if e.AgentName == role {
				into[role] = e
			}
		}
	}
	running, resumed := map[string]trackerEntry{}, map[string]trackerEntry{}
	var spawns []fr.Call
	var turns []fr.Turn
	for _, role := range roles {
		spawns = append(spawns, fr.NamespacedFunction("c_spawn_"+role, ns, "spawn_agent", map[string]any{"agent_type": role, "message": "e2e role " + role + ": report your role."}))
		turns = append(turns,
			fr.Turn{Name: "sub-" + role, When: fr.All(isRole(role), fr.Prompt("e2e role "+role+":")), Do: func(*fr.ResponsesRequest) fr.Reply {
				snapshot(running, role)
				return fr.Reply{Text: "Role " + role + " reporting."}
			}},
			fr.Turn{Name: "resub-" + role, When: fr.All(isRole(role), fr.Prompt("e2e resume "+role+":")), Do: func(*fr.ResponsesRequest) fr.Reply {
				snapshot(resumed, role)
				return fr.Reply{Text: "Role " + role + " reporting again."}
			}},
		)
	}
	ids := func(r *fr.ResponsesRequest) []string {
		var out []string
		for _, c := range spawns {
			out = append(out, spawnedID(t, r, c.ID))
		}
		return out
	}
	var stopped, final []trackerEntry
	// Once the first waits report every role completed: a follow-up to
	// each with send_input.
	sendAll := func(r *fr.ResponsesRequest) fr.Reply {
		return waitAll("c_wait", ids(r), func() fr.Reply {
			stopped = s.tracker()
			var sends []fr.Call
			for i, id := range ids(r) {
				sends = append(sends, fr.NamespacedFunction("c_send_"+roles[i], ns, "send_input", map[string]any{"target": id, "message": "e2e resume " + roles[i] + ": report again."}))
			}
			return fr.Reply{Calls: sends}
		})(r)
	}
	finish := func(r *fr.ResponsesRequest) fr.Reply {
		return waitAll("r_wait", ids(r), func() fr.Reply {
			final = s.tracker()
			return fr.Reply{Text: "Every role reported twice."}
		})(r)
	}
	turns = append(turns,
		fr.Turn{Name: "search", When: fr.All(lead, fr.Prompt("e2e: spawn every role")), Reply: fr.Reply{Calls: []fr.Call{{Kind: fr.KindToolSearch, ID: "c_search", Args: map[string]any{"query": "spawn agent wait send input", "limit": 10}}}}},
		fr.Turn{Name: "spawn", When: fr.All(lead, fr.After("c_search")), Reply: fr.Reply{Calls: spawns}},
		fr.Turn{Name: "wait", When: fr.All(lead, fr.After("c_spawn_writer")), Do: sendAll},
		fr.Turn{Name: "wait-more", When: fr.All(lead, afterPrefix("c_wait")), Repeat: true, Do: sendAll},
		fr.Turn{Name: "rewait", When: fr.All(lead, fr.After("c_send_writer")), Do: finish},
		fr.Turn{Name: "rewait-more", When: fr.All(lead, afterPrefix("r_wait")), Repeat: true, Do: finish},
	)
	api := fr.New(turns...)
	defer api.Close()
	// Codex runs at most 6 subagents at once by default.
	s = newSession(t, api, sessionOpts{nexus: true, userConfig: "\n[agents]\nmax_threads = 10\n"})
	s.run("e2e: spawn every role")
	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}

	search, _ := api.Answered("spawn")
	found, _ := search.Responses.Output("c_search")
	params := ""
	for _, tl := range found.Tools {
		for _, sub := range tl.Tools {
			if sub.Name == "spawn_agent" {
				params = string(sub.Parameters)
			}
		}
	}
	wait, _ := api.Answered("wait")
	bounded := 0
	for _, role := range roles {
		if !strings.Contains(params, role+": {") {
			t.Errorf("spawn_agent's agent_type does not offer %s", role)
		}
		id := spawnedID(t, wait.Responses, "c_spawn_"+role)
		sub, ok := api.Answered("sub-" + role)
		if !ok {
			continue
		}
		dev := sub.Responses.DeveloperText()
		// The role's body: developer_instructions, whole.
		if body := s.agentBody(t, role); !strings.Contains(dev, body) {
			t.Errorf("%s's body (%d bytes) did not reach it whole", role, len(body))
		}
		if !strings.Contains(dev, "Working in Codex (nexus harness notes)") {
			t.Errorf("%s did not get the Codex harness notes", role)
		}
		// nexus's brief: the role, the instance, what the gate denies it.
		brief := "nexus: you are the " + role + " agent"
		if !strings.Contains(dev, brief) || !strings.Contains(dev, "instance "+id) {
			t.Errorf("%s's nexus brief: %.300q", role, dev[strings.Index(dev, "nexus: you are"):])
		}
		// running → completed → running again → completed.
		states := []struct {
			at     string
			e      trackerEntry
			status string
			resume int
		}{
			{"while it ran", running[role], "running", 0},
			{"after wait_agent", entryOf(stopped, id), "completed", 0},
			{"resumed by send_input", resumed[role], "running", 1},
			{"after the second wait_agent", entryOf(final, id), "completed", 1},
		}
		for _, w := range states {
			if w.e.AgentID != id || w.e.AgentName != role || w.e.HarnessID != "codex" || w.e.Status != w.status || w.e.ResumeCount != w.resume {
				t.Errorf("%s %s: %+v (id %s), want %s with resume_count %d", role, w.at, w.e, id, w.status, w.resume)
			}
		}
		// The resume brings the brief again; a role of the bounded resume
		// tier is told it is resumed (to re-read its files).
		if re, ok := api.Answered("resub-" + role); ok {
			rdev := re.Responses.DeveloperText()
			if strings.Count(rdev, brief) < 2 {
				t.Errorf("the resumed %s did not get its brief again", role)
			}
			if strings.Contains(rdev, brief+" (") && strings.Contains(rdev, "resume tier bounded") {
				bounded++
				if !strings.Contains(rdev, "You are being resumed") {
					t.Errorf("the resumed %s (bounded resume tier) was not told it is resumed", role)
				}
			}
		}
	}
	if bounded == 0 {
		t.Error("no role of the bounded resume tier was resumed")
	}
	if len(final) != len(roles) {
		t.Errorf("tracker at the end holds %d entries, want %d: %+v", len(final), len(roles), final)
	}
	// SessionEnd ran to its end (within Codex's 3 s): the tracker is gone.
	if _, err := os.Stat(filepath.Join(s.proj, ".nexus/state/codex/agent-tracker.json")); !os.IsNotExist(err) {
		t.Errorf("the tracker outlived the session (SessionEnd did not finish): %v", err)
	}
}

// afterPrefix is fr.After for any call whose id starts with prefix: the
// request's last item is such a call's output (developer messages and
// notifications aside), and the model has not acted since.
func afterPrefix(prefix string) fr.Matcher {
	return func(r *fr.ResponsesRequest) bool {
		last := ""
		for _, it := range r.Input {
			switch {
			case strings.HasSuffix(it.Type, "_output"):
				last = it.CallID
			case strings.HasSuffix(it.Type, "_call") || it.Type == "message" && it.Role == "assistant":
				last = ""
			}
		}
		return strings.HasPrefix(last, prefix)
	}
}

// waitAll is Lead awaiting every agent of ids: wait_agent (<prefix>1,
// <prefix>2, …) for those not reported completed by the waits so far, then
// done once all are.
func waitAll(prefix string, ids []string, done func() fr.Reply) func(*fr.ResponsesRequest) fr.Reply {
	return func(r *fr.ResponsesRequest) fr.Reply {
		completed := map[string]bool{}
		n := 0
		for _, it := range r.Input {
			if !strings.HasPrefix(it.CallID, prefix) || !strings.HasSuffix(it.Type, "_output") {
				continue
			}
			n++
			var out struct {
				Status map[string]map[string]any `json:"status"`
			}
			if json.Unmarshal([]byte(it.Output.Text()), &out) == nil {
				for id, st := range out.Status {
					if _, ok := st["completed"]; ok {
						completed[id] = true
					}
				}
			}
		}
		var rest []string
		for _, id := range ids {
			if !completed[id] {
				rest = append(rest, id)
			}
		}
		if len(rest) == 0 && done != nil {
			return done()
		}
		return fr.Reply{Calls: []fr.Call{fr.NamespacedFunction(fmt.Sprintf("%s%d", prefix, n+1), ns, "wait_agent", map[string]any{"targets": rest, "timeout_ms": 90000})}}
	}
}

// hasAll reports whether every string is in s.
func hasAll(s string, subs ...string) bool {
	return !slices.ContainsFunc(subs, func(x string) bool { return !strings.Contains(s, x) })
}

// TestE2ECodexGate: the gate over Codex's tools, in one session with an
// open task cycle. The architect (no_file_edit, no_task_create) is refused
// apply_patch adding a file and updating one, a shell redirect, an
// apply_patch heredoc through the shell and nx_task_add, each with nexus's
// reason reaching it and nothing written, and may save its artifact; the
// engineer's apply_patch and heredoc patch run, and both files are in its
// files_touched (the heredoc, which Codex reports to no PostToolUse,
// counted when the gate allowed it).
func TestE2ECodexGate(t *testing.T) {
	t.Parallel()
	arch, eng := isRole("architect"), isRole("engineer")
	const (
		addPatch    = "*** Begin Patch\n*** Add File: design.md\n+# design\n*** End Patch\n"
		updatePatch = "*** Begin Patch\n*** Update File: README.md\n@@\n-# project\n+# changed by the architect\n*** End Patch\n"
		archHeredoc = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: heredoc-arch.txt\n+no\n*** End Patch\nEOF\n"
		engPatch    = "*** Begin Patch\n*** Add File: src/cache.go\n+package cache\n*** End Patch\n"
		engHeredoc  = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: src/heredoc.go\n+package cache\n*** End Patch\nEOF\n"
	)
	var s *session
	var final []trackerEntry
	api := fr.New(
		fr.Turn{Name: "warm", When: fr.All(lead, fr.Prompt("e2e: gate")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("c_warm", "exec_command", map[string]any{"cmd": "true"})}}},
		fr.Turn{Name: "search-task", When: fr.All(lead, fr.After("c_warm")), Reply: fr.Reply{Calls: []fr.Call{{Kind: fr.KindToolSearch, ID: "c_search_task", Args: map[string]any{"query": "nexus task add", "limit": 20}}}}},
		fr.Turn{Name: "task", When: fr.All(lead, fr.After("c_search_task")), Reply: fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_task", "mcp__nexus", "nx_task_add", map[string]any{"title": "design and build the cache", "context": "e2e"})}}},
		fr.Turn{Name: "search-spawn", When: fr.All(lead, fr.After("c_task")), Reply: fr.Reply{Calls: []fr.Call{{Kind: fr.KindToolSearch, ID: "c_search_spawn", Args: map[string]any{"query": "spawn agent wait", "limit": 10}}}}},
		fr.Turn{Name: "spawn", When: fr.All(lead, fr.After("c_search_spawn")), Reply: fr.Reply{Calls: []fr.Call{
			fr.NamespacedFunction("c_spawn_arch", ns, "spawn_agent", map[string]any{"agent_type": "architect", "message": "e2e architect: try to write"}),
			fr.NamespacedFunction("c_spawn_eng", ns, "spawn_agent", map[string]any{"agent_type": "engineer", "message": "e2e engineer: implement"}),
		}}},
		fr.Turn{Name: "wait", When: fr.All(lead, fr.After("c_spawn_eng")), Do: func(r *fr.ResponsesRequest) fr.Reply {
			return waitAll("c_wait", []string{spawnedID(t, r, "c_spawn_arch"), spawnedID(t, r, "c_spawn_eng")}, nil)(r)
		}},
		fr.Turn{Name: "wait-more", When: fr.All(lead, afterPrefix("c_wait")), Repeat: true, Do: func(r *fr.ResponsesRequest) fr.Reply {
			return waitAll("c_wait", []string{spawnedID(t, r, "c_spawn_arch"), spawnedID(t, r, "c_spawn_eng")}, func() fr.Reply {
				final = s.tracker()
				return fr.Reply{Text: "Gate done."}
			})(r)
		}},

		fr.Turn{Name: "arch-add", When: fr.All(arch, fr.Prompt("e2e architect:")), Reply: fr.Reply{Calls: []fr.Call{fr.Custom("a_add", "apply_patch", addPatch)}}},
		fr.Turn{Name: "arch-update", When: fr.All(arch, fr.After("a_add")), Reply: fr.Reply{Calls: []fr.Call{fr.Custom("a_update", "apply_patch", updatePatch)}}},
		fr.Turn{Name: "arch-redirect", When: fr.All(arch, fr.After("a_update")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("a_redirect", "exec_command", map[string]any{"cmd": "echo design > design.txt"})}}},
		fr.Turn{Name: "arch-heredoc", When: fr.All(arch, fr.After("a_redirect")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("a_heredoc", "exec_command", map[string]any{"cmd": archHeredoc})}}},
		fr.Turn{Name: "arch-search", When: fr.All(arch, fr.After("a_heredoc")), Reply: fr.Reply{Calls: []fr.Call{{Kind: fr.KindToolSearch, ID: "a_search", Args: map[string]any{"query": "nexus task add artifact write", "limit": 20}}}}},
		fr.Turn{Name: "arch-task", When: fr.All(arch, fr.After("a_search")), Reply: fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("a_task", "mcp__nexus", "nx_task_add", map[string]any{"title": "architect's own task", "context": "e2e"})}}},
		fr.Turn{Name: "arch-artifact", When: fr.All(arch, fr.After("a_task")), Reply: fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("a_artifact", "mcp__nexus", "nx_artifact_write", map[string]any{"filename": "design.md", "content": "# design\nThe architect's design.\n"})}}},
		fr.Turn{Name: "arch-done", When: fr.All(arch, fr.After("a_artifact")), Reply: fr.Reply{Text: "Design saved as an artifact."}},

		fr.Turn{Name: "eng-patch", When: fr.All(eng, fr.Prompt("e2e engineer:")), Reply: fr.Reply{Calls: []fr.Call{fr.Custom("e_patch", "apply_patch", engPatch)}}},
		fr.Turn{Name: "eng-heredoc", When: fr.All(eng, fr.After("e_patch")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("e_heredoc", "exec_command", map[string]any{"cmd": engHeredoc})}}},
		fr.Turn{Name: "eng-done", When: fr.All(eng, fr.After("e_heredoc")), Reply: fr.Reply{Text: "Implemented."}},
	)
	defer api.Close()
	s = newSession(t, api, sessionOpts{nexus: true})
	readme := filepath.Join(s.proj, "README.md")
	if err := os.WriteFile(readme, []byte("# project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.run("e2e: gate")
	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	output := func(turn, call string) string {
		r, ok := api.Answered(turn)
		if !ok {
			return ""
		}
		out, _ := r.Responses.Output(call)
		return out.Output.Text()
	}
	denials := []struct{ turn, call, want string }{
		{"arch-update", "a_add", "Command blocked by PreToolUse hook: nexus denied apply_patch: the architect agent has capability no_file_edit"},
		{"arch-redirect", "a_update", "Command blocked by PreToolUse hook: nexus denied apply_patch: the architect agent has capability no_file_edit"},
		{"arch-heredoc", "a_redirect", "Command blocked by PreToolUse hook: nexus denied Bash: the architect agent has capability no_file_edit"},
		{"arch-search", "a_heredoc", "Command blocked by PreToolUse hook: nexus denied Bash: the architect agent has capability no_file_edit"},
		{"arch-artifact", "a_task", "Tool call blocked by PreToolUse hook: nexus denied mcp__nexus__nx_task_add: the architect agent has capability no_task_create"},
	}
	for _, d := range denials {
		if got := output(d.turn, d.call); !strings.HasPrefix(got, d.want) || !strings.Contains(got, "mcp__nexus__nx_artifact_write") && d.call != "a_task" {
			t.Errorf("%s: the architect got %q, want a denial starting %q and pointing at the artifact tool", d.call, got, d.want)
		}
	}
	for _, f := range []string{"design.md", "design.txt", "heredoc-arch.txt"} {
		if _, err := os.Stat(filepath.Join(s.proj, f)); !os.IsNotExist(err) {
			t.Errorf("a denied call wrote %s (%v)", f, err)
		}
	}
	if b, _ := os.ReadFile(readme); string(b) != "# project\n" {
		t.Errorf("README.md after the architect's denied update: %q", b)
	}
	if got := output("arch-done", "a_artifact"); !strings.Contains(got, `"success":true`) {
		t.Errorf("the architect's nx_artifact_write: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(s.proj, ".nexus/state/artifacts/design.md")); err != nil || !strings.Contains(string(b), "The architect's design.") {
		t.Errorf("the architect's artifact: %q %v", b, err)
	}
	for _, f := range []string{"src/cache.go", "src/heredoc.go"} {
		if b, err := os.ReadFile(filepath.Join(s.proj, f)); err != nil || string(b) != "package cache\n" {
			t.Errorf("the engineer's %s: %q %v", f, b, err)
		}
	}
	var engineer, architect trackerEntry
	for _, e := range final {
		switch e.AgentName {
		case "engineer":
			engineer = e
		case "architect":
			architect = e
		}
	}
	if !slices.Equal(engineer.FilesTouched, []string{"src/cache.go", "src/heredoc.go"}) || engineer.Status != "completed" {
		t.Errorf("the engineer's tracker entry: %+v", engineer)
	}
	if len(architect.FilesTouched) != 0 || architect.Status != "completed" {
		t.Errorf("the architect's tracker entry: %+v", architect)
	}
}

// nexusTools are nexus-core's 11 tools as nexus serves them, with
// arguments that succeed in order.
var nexusTools = []struct {
	name string
	args map[string]any
}{
	{"nx_plan_start", map[string]any{"topic": "e2e storage", "issues": []any{"Which store?"}, "research_summary": "e2e"}},
	{"nx_plan_status", map[string]any{}},
	{"nx_plan_update", map[string]any{"action": "add", "title": "Which format?"}},
	{"nx_plan_decide", map[string]any{"issue_id": 1, "decision": "SQLite"}},
	{"nx_task_add", map[string]any{"title": "build the store", "context": "e2e"}},
	{"nx_task_list", map[string]any{}},
	{"nx_task_update", map[string]any{"id": 1, "status": "completed"}},
	{"nx_artifact_write", map[string]any{"filename": "notes.md", "content": "# notes\n"}},
	{"nx_context", map[string]any{}},
	{"nx_task_close", map[string]any{}},
	{"nx_history_search", map[string]any{"query": "store"}},
}

// TestE2ECodexTools: nexus's SessionStart context reaches the model before
// the first prompt; tool_search finds all 11 nexus-core tools in the
// mcp__nexus namespace (beside nexus's own memory tools); each is called
// and answers without an error.
func TestE2ECodexTools(t *testing.T) {
	t.Parallel()
	turns := []fr.Turn{
		// A command first: Codex does not wait for MCP servers, and a
		// tool_search made before one is up finds none of its tools.
		{Name: "warm", When: fr.All(lead, fr.Prompt("e2e: tools")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("c_warm", "exec_command", map[string]any{"cmd": "true"})}}},
		{Name: "search", When: fr.After("c_warm"), Reply: fr.Reply{Calls: []fr.Call{{Kind: fr.KindToolSearch, ID: "c_search", Args: map[string]any{"query": "nexus plan task context artifact history", "limit": 20}}}}},
	}
	prev := "c_search"
	for _, tool := range nexusTools {
		id := "c_" + tool.name
		turns = append(turns, fr.Turn{Name: tool.name, When: fr.After(prev), Reply: fr.Reply{Calls: []fr.Call{fr.NamespacedFunction(id, "mcp__nexus", tool.name, tool.args)}}})
		prev = id
	}
	turns = append(turns, fr.Turn{Name: "answer", When: fr.After(prev), Reply: fr.Reply{Text: "Tools done."}})
	api := fr.New(turns...)
	defer api.Close()
	s := newSession(t, api, sessionOpts{nexus: true})
	s.run("e2e: tools")
	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	first, _ := api.Answered("warm")
	rq := first.Responses
	start, prompt := messageIndex(rq, "developer", "nexus is active for this project"), messageIndex(rq, "user", "e2e: tools")
	if start < 0 || start > prompt {
		t.Errorf("SessionStart context at %d, prompt at %d: the context must come first", start, prompt)
	}
	if dev := rq.DeveloperText(); !hasAll(dev, "harness id codex", "spawn_agent", "mcp__nexus__nx_plan_status", "[plan]") {
		t.Errorf("SessionStart context: %.600q", dev[max(0, strings.Index(dev, "nexus is active")):])
	}
	after, _ := api.Answered(nexusTools[0].name)
	found, _ := after.Responses.Output("c_search")
	var offered []string
	for _, tl := range found.Tools {
		if tl.Name == "mcp__nexus" {
			for _, sub := range tl.Tools {
				offered = append(offered, sub.Name)
			}
		}
	}
	last, _ := api.Answered("answer")
	for _, tool := range nexusTools {
		if !slices.Contains(offered, tool.name) {
			t.Errorf("tool_search did not find %s (found %v)", tool.name, offered)
		}
		out, ok := last.Responses.Output("c_" + tool.name)
		if text := out.Output.Text(); !ok || strings.Contains(text, `"error"`) || strings.Contains(text, "blocked by PreToolUse") || strings.Contains(text, "unsupported call") {
			t.Errorf("%s answered %q", tool.name, text)
		}
	}
	var history struct {
		Cycles []json.RawMessage `json:"cycles"`
	}
	b, err := os.ReadFile(filepath.Join(s.proj, ".nexus/history.json"))
	if err != nil || json.Unmarshal(b, &history) != nil || len(history.Cycles) != 1 {
		t.Errorf("history.json after nx_task_close: %s %v", b, err)
	}
}

// catRe finds the shell read nexus asks for when a skill is too long for a
// hook context.
var catRe = regexp.MustCompile("`(cat [^`]*SKILL.md[^`]*)`")

// readSkill is the model following nexus's skill context: the body is
// either in the UserPromptSubmit context, or the context names the skill
// file, which the model reads with the shell (callID) before answering.
func readSkill(callID string) func(*fr.ResponsesRequest) fr.Reply {
	return func(r *fr.ResponsesRequest) fr.Reply {
		if m := catRe.FindStringSubmatch(r.DeveloperText()); m != nil {
			return fr.Reply{Calls: []fr.Call{fr.Function(callID, "exec_command", map[string]any{"cmd": m[1], "max_output_tokens": 20000})}}
		}
		return fr.Reply{Text: "Following the skill."}
	}
}

// skillBody is an installed SKILL.md without its front matter.
func (s *session) skillBody(t *testing.T, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.proj, ".agents", "skills", id, "SKILL.md"))
	if err != nil {
		t.Fatalf("nexus install codex did not write the %s skill: %v", id, err)
	}
	_, body, ok := strings.Cut(strings.TrimPrefix(string(b), "---\n"), "\n---\n")
	if !ok {
		t.Fatalf("%s's SKILL.md has no front matter", id)
	}
	return strings.TrimSpace(body)
}

// TestE2ECodexTags: the user's bracket tags in real Codex sessions (one
// `codex exec` each, in one project). [plan] and [run] deliver their whole
// skill: in the hook context when it fits Codex's 10,000 bytes, else
// through the skill file the context names, which the model reads; a
// `[plan]` in inline code activates nothing; [d] records a decision on the
// open plan and [m] saves a memory; reads of .nexus/memory by cat and sed
// are recorded for Codex's harness id.
func TestE2ECodexTags(t *testing.T) {
	t.Parallel()
	api := fr.New(
		fr.Turn{Name: "plan", When: fr.Prompt("[plan] e2e"), Do: readSkill("c_plan_cat")},
		fr.Turn{Name: "plan-search", When: fr.After("c_plan_cat"), Reply: fr.Reply{Calls: []fr.Call{{Kind: fr.KindToolSearch, ID: "c_search", Args: map[string]any{"query": "nexus plan start", "limit": 20}}}}},
		fr.Turn{Name: "plan-start", When: fr.After("c_search"), Reply: fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_start", "mcp__nexus", "nx_plan_start", map[string]any{"topic": "storage", "issues": []any{"Which store?"}, "research_summary": "e2e"})}}},
		fr.Turn{Name: "plan-done", When: fr.After("c_start"), Reply: fr.Reply{Text: "Plan started."}},
		fr.Turn{Name: "decide", When: fr.Prompt("[d] SQLite"), Reply: fr.Reply{Text: "Decided."}},
		fr.Turn{Name: "memory", When: fr.Prompt("[m] Measured:"), Reply: fr.Reply{Text: "Saved."}},
		fr.Turn{Name: "inline", When: fr.Prompt("what does `[plan]` do"), Reply: fr.Reply{Text: "It plans."}},
		fr.Turn{Name: "run", When: fr.Prompt("[run] e2e"), Do: readSkill("c_run_cat")},
		fr.Turn{Name: "run-done", When: fr.After("c_run_cat"), Reply: fr.Reply{Text: "Running."}},
		fr.Turn{Name: "reads", When: fr.Prompt("e2e: read memory"), Reply: fr.Reply{Calls: []fr.Call{fr.Function("c_cat", "exec_command", map[string]any{"cmd": "cat .nexus/memory/store.md"})}}},
		fr.Turn{Name: "reads-sed", When: fr.After("c_cat"), Reply: fr.Reply{Calls: []fr.Call{fr.Function("c_sed", "exec_command", map[string]any{"cmd": "sed -n 1p .nexus/memory/layout.md"})}}},
		fr.Turn{Name: "reads-done", When: fr.After("c_sed"), Reply: fr.Reply{Text: "Read."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{nexus: true})

	// [plan]: the whole nx-plan skill reaches the model.
	s.run("[plan] e2e: plan the storage layer")
	plan := s.skillBody(t, "nx-plan")
	if !skillReached(api, "plan", "plan-search", "c_plan_cat", plan) {
		t.Errorf("the model did not get the whole nx-plan skill (%d bytes)", len(plan))
	}
	// [d] and [m].
	s.run("[d] SQLite for the store")
	r, _ := api.Answered("decide")
	if dev := r.Responses.DeveloperText(); !strings.Contains(dev, "nexus recorded the decision on issue #1") {
		t.Errorf("[d]: %.300q", dev[max(0, strings.LastIndex(dev, "nexus")):])
	}
	var p struct {
		Issues []struct {
			Status   string `json:"status"`
			Decision string `json:"decision"`
		} `json:"issues"`
	}
	if b, err := os.ReadFile(filepath.Join(s.proj, ".nexus/state/plan.json")); err != nil || json.Unmarshal(b, &p) != nil || len(p.Issues) != 1 || p.Issues[0].Status != "decided" || p.Issues[0].Decision != "SQLite for the store" {
		t.Errorf("plan.json after [d]: %+v %v", p, err)
	}
	s.run("[m] Measured: sqlite busy_timeout of 5s removes SQLITE_BUSY with 8 writers.")
	r, _ = api.Answered("memory")
	if dev := r.Responses.DeveloperText(); !strings.Contains(dev, ".nexus/memory/") {
		t.Errorf("[m]: %.300q", dev[max(0, strings.LastIndex(dev, "nexus")):])
	}
	mem, _ := filepath.Glob(filepath.Join(s.proj, ".nexus/memory/*.md"))
	if len(mem) != 1 {
		t.Fatalf("memory after [m]: %v", mem)
	}
	if b, _ := os.ReadFile(mem[0]); !strings.Contains(string(b), "busy_timeout of 5s") {
		t.Errorf("%s: %q", mem[0], b)
	}
	// `[plan]` in inline code is text, not a tag.
	s.run("what does `[plan]` do?")
	r, _ = api.Answered("inline")
	if dev := r.Responses.DeveloperText(); strings.Contains(dev, "nexus activated") {
		t.Errorf("`[plan]` in inline code activated a skill")
	}
	// [run]: the whole nx-run skill.
	s.run("[run] e2e: execute the plan")
	run := s.skillBody(t, "nx-run")
	if !skillReached(api, "run", "run-done", "c_run_cat", run) {
		t.Errorf("the model did not get the whole nx-run skill (%d bytes)", len(run))
	}
	// Memory reads by cat and sed.
	for name, text := range map[string]string{"store.md": "# store\nSQLite in db/\n", "layout.md": "# layout\n"} {
		if err := os.WriteFile(filepath.Join(s.proj, ".nexus/memory", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.run("e2e: read memory")
	b, err := os.ReadFile(filepath.Join(s.proj, ".nexus/state/codex/memory-access.jsonl"))
	if err != nil || !strings.Contains(string(b), "store.md") || !strings.Contains(string(b), "layout.md") {
		t.Errorf("memory-access.jsonl after cat and sed: %q %v", b, err)
	}
	// nx-run (8.6 KB) fits Codex's 10,000 bytes with the status nexus adds,
	// so the model reads no file for it; nx-plan (20 KB) does not.
	if u := slices.DeleteFunc(api.Unused(), func(n string) bool { return n == "run-done" }); len(u) > 0 {
		t.Errorf("scripted turns never reached: %v", u)
	}
	if _, ok := api.Answered("plan-search"); !ok {
		t.Error("the [plan] context named no skill file to read")
	}
}

// skillReached reports whether a skill's whole body reached the model:
// in the context of the turn's request, or in the output of the shell read
// the model made (call), which the next turn's request carries.
func skillReached(api *fr.Server, turn, next, call, body string) bool {
	r, ok := api.Answered(turn)
	if !ok {
		return false
	}
	if strings.Contains(r.Responses.DeveloperText(), body) {
		return true
	}
	n, ok := api.Answered(next)
	if !ok {
		return false
	}
	out, _ := n.Responses.Output(call)
	return strings.Contains(out.Output.Text(), body)
}
