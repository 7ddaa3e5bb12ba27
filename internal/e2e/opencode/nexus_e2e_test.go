//go:build e2e

package opencode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	oc "github.com/nexus-harness/nexus/harness/host/opencode"
	ocsetup "github.com/nexus-harness/nexus/harness/host/opencode/setup"
	"github.com/nexus-harness/nexus/harness/tags"
	fc "github.com/nexus-harness/nexus/internal/fakechat"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/vocabulary"
)

// nexus as OpenCode's harness in real `opencode run` sessions: nexus
// installed with `nexus install opencode` (the real binary, in an
// environment with no NEXUS_* variable and no nexus on PATH), the plugin
// it writes talking to a long-lived `nexus hook --host opencode --serve`,
// its MCP servers, its agents and skills.

// The nine roles of nexus-core 0.10.0.
var roles = []string{"architect", "designer", "engineer", "postdoc", "researcher", "reviewer", "strategist", "tester", "writer"}

func mcpName(tool string) string { return oc.MCPToolPrefix + tool }

func call(id, name string, args any) fc.Call { return fc.Call{ID: id, Name: name, Args: args} }

// chain scripts a model that, from when on, makes the calls one per turn
// (each turn answers the previous call's result), then ends with final;
// turn i is named after its call id.
func chain(when fc.Matcher, calls []fc.Call, final fc.Turn) []fc.Turn {
	var turns []fc.Turn
	for _, c := range calls {
		turns = append(turns, fc.Turn{Name: c.ID, When: when, Reply: fc.Reply{Calls: []fc.Call{c}}})
		when = fc.After(c.ID)
	}
	final.When = when
	return append(turns, final)
}

// result is the tool message answering a call, from the request that
// answers it.
func result(t *testing.T, api *fc.Server, next, callID string) string {
	t.Helper()
	req, ok := api.Answered(next)
	if !ok {
		t.Fatalf("no request answered %s", next)
	}
	m, ok := req.Chat.ToolResult(callID)
	if !ok {
		t.Fatalf("the request of %s lacks the result of %s", next, callID)
	}
	return m.Content.Text()
}

// servingChildren lists the running `nexus hook --host opencode --serve`
// processes of a project (the plugin names it with --project).
func servingChildren(proj string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if slices.Contains(args, "--serve") && slices.Contains(args, proj) {
			out = append(out, pid)
		}
	}
	return out
}

// ended waits for the project's long-lived nexus children to end (they end
// with OpenCode: their input closes).
func ended(t *testing.T, proj string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := servingChildren(proj)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("the nexus children %v outlived opencode run", left)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type trackerEntry struct {
	HarnessID    string   `json:"harness_id"`
	AgentName    string   `json:"agent_name"`
	AgentID      string   `json:"agent_id"`
	Status       string   `json:"status"`
	LastMessage  *string  `json:"last_message"`
	FilesTouched []string `json:"files_touched"`
}

func (s *session) tracker() ([]trackerEntry, string) {
	b, err := os.ReadFile(filepath.Join(s.proj, ".nexus", "state", "opencode", "agent-tracker.json"))
	var out []trackerEntry
	json.Unmarshal(b, &out)
	return out, fmt.Sprintf("%s (%v)", b, err)
}

// TestE2EOpenCodeLead: nexus installed, the Lead's first request carries
// nexus's session context; the 11 nexus tools are offered and each call
// succeeds; memory reads by read and by cat are recorded in OpenCode's
// namespace; every hook went to one long-lived child, which ends with
// OpenCode; dispose ends the session (its files removed).
func TestE2EOpenCodeLead(t *testing.T) {
	t.Parallel()
	const prompt = "e2e: exercise the nexus tools"
	var s *session
	var during []string
	calls := []fc.Call{
		call("c_plan_start", mcpName("nx_plan_start"), map[string]any{"topic": "e2e topic", "issues": []string{"Which store?"}, "research_summary": "read the code"}),
		call("c_plan_status", mcpName("nx_plan_status"), map[string]any{}),
		call("c_plan_update", mcpName("nx_plan_update"), map[string]any{"action": "add", "title": "Second issue"}),
		call("c_plan_decide", mcpName("nx_plan_decide"), map[string]any{"issue_id": 1, "decision": "Use files"}),
		call("c_task_add", mcpName("nx_task_add"), map[string]any{"title": "Write it", "context": "from the e2e session"}),
		call("c_task_list", mcpName("nx_task_list"), map[string]any{}),
		call("c_task_update", mcpName("nx_task_update"), map[string]any{"id": 1, "status": "completed"}),
		call("c_artifact", mcpName("nx_artifact_write"), map[string]any{"filename": "e2e-report.md", "content": "e2e artifact\n"}),
		call("c_context", mcpName("nx_context"), map[string]any{}),
		call("c_history", mcpName("nx_history_search"), map[string]any{"query": ""}),
		call("c_task_close", mcpName("nx_task_close"), map[string]any{}),
		call("c_read", "read", map[string]any{"filePath": ".nexus/memory/e2e-note.md"}),
		call("c_cat", "bash", map[string]any{"command": "cat .nexus/memory/e2e-note.md", "description": "Read the note"}),
	}
	api := fc.New(chain(fc.Prompt(prompt), calls, fc.Turn{Name: "final", Do: func(*fc.ChatRequest) fc.Reply {
		// What the session keeps while it runs; dispose must remove it.
		during, _ = filepath.Glob(filepath.Join(s.proj, ".nexus/state/opencode/*"))
		return fc.Reply{Text: "All done."}
	}})...)
	defer api.Close()
	s = newSession(t, api, sessionOpts{nexus: true})
	writeFile(t, filepath.Join(s.proj, ".nexus", "memory", "e2e-note.md"), []byte("# e2e note\nRemember the e2e marker.\n"))
	r := s.run(prompt, "--title", "e2e")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("the session stopped before these turns: %v\nstderr: %s", u, tail(r.stderr, 3000))
	}
	first, _ := api.Answered(calls[0].ID)
	if got := first.Chat.FirstUserText(); !strings.HasPrefix(got, prompt+"\n") || !strings.Contains(got, "nexus is active for this project") || !strings.Contains(got, "harness id opencode") {
		t.Errorf("the Lead's first request lacks nexus's session context: %.600q", got)
	}
	if !strings.Contains(first.Chat.FirstUserText(), "Roles you can spawn with the task tool, subagent_type = the role id") {
		t.Error("the session context does not say how to spawn a role in OpenCode")
	}
	for _, tool := range nexusTools {
		if !first.Chat.HasTool(mcpName(tool)) {
			t.Errorf("the model is not offered %s; tools: %v", mcpName(tool), first.Chat.ToolNames())
		}
	}
	for i, c := range calls {
		next := "final"
		if i+1 < len(calls) {
			next = calls[i+1].ID
		}
		got := result(t, api, next, c.ID)
		if strings.HasPrefix(c.Name, oc.MCPToolPrefix) {
			var v map[string]any
			if err := json.Unmarshal([]byte(got), &v); err != nil || v["error"] != nil {
				t.Errorf("%s: %q", c.Name, got)
			}
		}
		if (c.ID == "c_read" || c.ID == "c_cat") && !strings.Contains(got, "Remember the e2e marker.") {
			t.Errorf("%s of the memory file returned %q", c.Name, got)
		}
	}
	if _, err := os.Stat(filepath.Join(s.proj, ".nexus/state/artifacts/e2e-report.md")); err != nil {
		t.Errorf("nx_artifact_write: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(s.proj, ".nexus/state/opencode/memory-access.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Path        string `json:"path"`
		AccessCount int    `json:"access_count"`
		LastAgent   string `json:"last_agent"`
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.AccessCount != 2 || rec.LastAgent != "lead" || filepath.Base(rec.Path) != "e2e-note.md" {
		t.Errorf("memory-access.jsonl %s (%v): want e2e-note.md read twice (read, cat) by lead", b, err)
	}
	// dispose ended the session: the tool log it kept is gone, the record
	// says so, and the long-lived child ended with OpenCode.
	p := filepath.Join(s.proj, ".nexus/state/opencode/tool-log.jsonl")
	if !slices.Contains(during, p) {
		t.Errorf("no tool log during the session: %v", during)
	} else if _, err := os.Stat(p); err == nil {
		t.Error("the tool log survived the session: dispose did not end it")
	}
	var sessions oc.Sessions
	sb, _ := os.ReadFile(filepath.Join(s.proj, ".nexus/state/opencode", oc.SessionsFile))
	if err := json.Unmarshal(sb, &sessions); err != nil {
		t.Fatalf("sessions.json: %v", err)
	}
	roots := 0
	for id, v := range sessions.Sessions {
		if !v.Child() {
			roots++
			if !v.Ended || v.PID == 0 {
				t.Errorf("root session %s: %+v, want ended", id, v)
			}
		}
	}
	if roots != 1 {
		t.Errorf("%d root sessions recorded, want 1: %s", roots, sb)
	}
	ended(t, s.proj)
}

// skillText is the nx-plan skill as nexus activates it for OpenCode (its
// body with the macros spelled for OpenCode and its host notes).
func skillText(t *testing.T, skill string) string {
	t.Helper()
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	st, err := tags.ActivateSkill(core, skill, "", tags.NewProfile(oc.Spelling, tags.New(core.Tags()), "nx_"))
	if err != nil || st.ExpandErr != nil {
		t.Fatal(err, st.ExpandErr)
	}
	return st.Text
}

// TestE2EOpenCodePlanTag: [plan] in the prompt delivers the whole nx-plan
// skill to the model with the message; `[plan]` in inline code delivers
// nothing.
func TestE2EOpenCodePlanTag(t *testing.T) {
	t.Parallel()
	api := fc.New(
		fc.Turn{Name: "tag", When: fc.Prompt("design the cache"), Reply: fc.Reply{Text: "Planning."}},
		fc.Turn{Name: "code", When: fc.Prompt("what does"), Reply: fc.Reply{Text: "It plans."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{nexus: true})
	s.run("[plan] design the cache", "--title", "e2e")
	s.run("what does `[plan]` do?", "--title", "e2e")
	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("turns never reached: %v", u)
	}
	want := skillText(t, "nx-plan")
	tag, _ := api.Answered("tag")
	got := tag.Chat.FirstUserText()
	if !strings.Contains(got, strings.TrimSpace(want)) {
		t.Errorf("[plan] did not deliver the whole nx-plan skill (%d characters) with the message: %d characters given", len(want), len(got))
	}
	if strings.Contains(got, "Agent tool") || !strings.Contains(got, "task tool (subagent_type") {
		t.Error("the skill is not spelled for OpenCode")
	}
	code, _ := api.Answered("code")
	if got := code.Chat.FirstUserText(); strings.Contains(got, "nx-plan") || strings.Contains(got, want[:200]) {
		t.Errorf("`[plan]` in inline code activated the skill: %.400q", got)
	}
}

// TestE2EOpenCodeRoles: each of the nine roles is listed by the task tool,
// runs through it with its body as the system prompt, gets nexus's brief
// and the knowledge index, is tracked running while it works and
// completed with its last message once the task returns.
func TestE2EOpenCodeRoles(t *testing.T) {
	t.Parallel()
	var s *session
	var mu sync.Mutex
	running := map[string]string{}
	var final []trackerEntry
	var finalRaw string
	var spawns []fc.Call
	var turns []fc.Turn
	for _, role := range roles {
		spawns = append(spawns, call("c_spawn_"+role, "task", map[string]any{"description": "e2e " + role, "subagent_type": role, "prompt": "e2e role " + role + ": report your role."}))
		turns = append(turns, fc.Turn{Name: "sub-" + role, When: fc.Prompt("e2e role " + role + ":"), Do: func(*fc.ChatRequest) fc.Reply {
			tr, _ := s.tracker()
			mu.Lock()
			defer mu.Unlock()
			for _, e := range tr {
				if e.AgentName == role {
					running[role] = e.Status
				}
			}
			return fc.Reply{Text: "Role " + role + " reporting."}
		}})
	}
	turns = append(turns, fc.Turn{Name: "lead", When: fc.Prompt("e2e: spawn every role"), Reply: fc.Reply{Calls: spawns}})
	for i := range spawns {
		turns = append(turns, fc.Turn{Name: "after-" + spawns[i].ID, When: fc.After(spawns[i].ID), Repeat: true, Do: func(*fc.ChatRequest) fc.Reply {
			mu.Lock()
			defer mu.Unlock()
			final, finalRaw = s.tracker()
			return fc.Reply{Text: "Every role reported."}
		}})
	}
	api := fc.New(turns...)
	defer api.Close()
	s = newSession(t, api, sessionOpts{nexus: true})
	writeFile(t, filepath.Join(s.proj, ".nexus", "context", "architecture.md"), []byte("# Architecture\n"))
	r := s.run("e2e: spawn every role", "--title", "e2e")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("turns never reached: %v\nstderr: %s", u, tail(r.stderr, 3000))
	}
	lead, _ := api.Answered("lead")
	task, _ := lead.Chat.Tool("task")
	for _, role := range roles {
		if !strings.Contains(task.Function.Description, "- "+role+": ") {
			t.Errorf("the task tool does not list %s", role)
		}
		sub, ok := api.Answered("sub-" + role)
		if !ok {
			continue
		}
		body, _ := os.ReadFile(filepath.Join(s.proj, ".opencode", "agents", role+".md"))
		a, err := ocsetup.ParseAgentMD(role, body)
		if err != nil {
			t.Fatal(err)
		}
		if sys := sub.Chat.SystemText(); !strings.HasPrefix(sys, strings.TrimSpace(a.Body)[:60]) || strings.Contains(sys, "You are opencode") {
			t.Errorf("%s does not run with its body as the system prompt: %.200q", role, sys)
		}
		first := sub.Chat.FirstUserText()
		if !strings.Contains(first, "nexus: you are the "+role+" agent") || !strings.Contains(first, "Project knowledge") || !strings.Contains(first, ".nexus/context/ (1): architecture.md") {
			t.Errorf("%s lacks nexus's brief or the knowledge index: %.600q", role, first)
		}
		if running[role] != "running" {
			t.Errorf("%s was tracked %q while it worked, want running", role, running[role])
		}
	}
	done := 0
	for _, e := range final {
		if e.HarnessID != "opencode" || !slices.Contains(roles, e.AgentName) {
			t.Errorf("tracked %+v", e)
		}
		if e.Status == "completed" && e.LastMessage != nil && *e.LastMessage == "Role "+e.AgentName+" reporting." {
			done++
		}
	}
	if done != len(roles) {
		t.Errorf("%d of %d roles tracked completed with their last message: %s", done, len(roles), finalRaw)
	}
	ended(t, s.proj)
}

// stripPermissions rewrites an installed agent without its permission
// block: OpenCode then offers it every tool, and nexus's gate alone stands
// between the role and what its capabilities block.
func stripPermissions(t *testing.T, s *session, role string) {
	t.Helper()
	p := filepath.Join(s.proj, ".opencode", "agents", role+".md")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ocsetup.ParseAgentMD(role, b)
	if err != nil {
		t.Fatal(err)
	}
	a.Deny = nil
	out, err := ocsetup.AgentMD(a)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, out)
}

// architectScript: Lead spawns the architect, which makes the calls in
// turn, then reports.
func architectScript(marker string, calls []fc.Call) *fc.Server {
	turns := []fc.Turn{
		{Name: "lead", When: fc.Prompt("e2e: ask the architect"), Reply: fc.Reply{Calls: []fc.Call{call("c_spawn", "task", map[string]any{"description": "design", "subagent_type": "architect", "prompt": marker + ": write the design."})}}},
		{Name: "lead-final", When: fc.After("c_spawn"), Reply: fc.Reply{Text: "The architect reported."}},
	}
	return fc.New(append(turns, chain(fc.Prompt(marker+":"), calls, fc.Turn{Name: "arch-done", Reply: fc.Reply{Text: "I could not write it."}})...)...)
}

// refused checks that a call of the architect came back as nexus's
// refusal, with the reason, in the architect's conversation only.
func refused(t *testing.T, api *fc.Server, calls []fc.Call, i int, reason string) {
	t.Helper()
	next := "arch-done"
	if i+1 < len(calls) {
		next = calls[i+1].ID
	}
	got := result(t, api, next, calls[i].ID)
	if !strings.HasPrefix(got, "nexus denied "+calls[i].Name) || !strings.Contains(got, reason) {
		t.Errorf("the architect's %s came back %q, want nexus's refusal naming %q", calls[i].Name, got, reason)
	}
	lead, _ := api.Answered("lead-final")
	if strings.Contains(lead.Chat.AllText(), strings.TrimSpace(got)) {
		t.Errorf("the refusal of %s reached the Lead's conversation too", calls[i].Name)
	}
}

// TestE2EOpenCodeArchitectGate: the architect (no_file_edit,
// no_task_create) as installed is not offered write, edit, apply_patch or
// nexus_nx_task_add, and its shell redirect is refused by nexus; with its
// permissions removed from its agent file, nexus's gate alone refuses its
// write, edit, nexus_nx_task_add and shell append, and (with a model that
// gets apply_patch) its patch. Each reason reaches the architect, and
// nothing is written.
func TestE2EOpenCodeArchitectGate(t *testing.T) {
	t.Parallel()
	const original = "original notes\n"
	check := func(t *testing.T, s *session) {
		t.Helper()
		for _, f := range []string{"design.md", "patched.md"} {
			if _, err := os.Stat(filepath.Join(s.proj, f)); err == nil {
				t.Errorf("the architect wrote %s", f)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(s.proj, "notes.md")); string(b) != original {
			t.Errorf("notes.md changed: %q", b)
		}
		if b, err := os.ReadFile(filepath.Join(s.proj, ".nexus/state/tasks.json")); err == nil {
			t.Errorf("the architect added a task: %s", b)
		}
	}
	t.Run("installed", func(t *testing.T) {
		t.Parallel()
		calls := []fc.Call{call("a_bash", "bash", map[string]any{"command": "echo design > design.md", "description": "Write the design"})}
		api := architectScript("ARCH-INSTALLED", calls)
		defer api.Close()
		s := newSession(t, api, sessionOpts{nexus: true})
		writeFile(t, filepath.Join(s.proj, "notes.md"), []byte(original))
		s.run("e2e: ask the architect", "--title", "e2e")
		if u := api.Unused(); len(u) > 0 {
			t.Fatalf("turns never reached: %v", u)
		}
		first, _ := api.Answered("a_bash")
		for _, tool := range []string{"write", "edit", "apply_patch", mcpName("nx_task_add"), mcpName("nx_task_update"), mcpName("nx_task_close")} {
			if first.Chat.HasTool(tool) {
				t.Errorf("the architect is offered %s", tool)
			}
		}
		refused(t, api, calls, 0, "output redirection to design.md")
		check(t, s)
	})
	t.Run("gate alone", func(t *testing.T) {
		t.Parallel()
		calls := []fc.Call{
			call("a_write", "write", map[string]any{"filePath": "design.md", "content": "design\n"}),
			call("a_edit", "edit", map[string]any{"filePath": "notes.md", "oldString": "original", "newString": "changed"}),
			call("a_task", mcpName("nx_task_add"), map[string]any{"title": "sneaky", "context": "the architect"}),
			call("a_bash", "bash", map[string]any{"command": "echo more >> notes.md", "description": "Append"}),
		}
		api := architectScript("ARCH-GATE", calls)
		defer api.Close()
		s := newSession(t, api, sessionOpts{nexus: true})
		stripPermissions(t, s, "architect")
		writeFile(t, filepath.Join(s.proj, "notes.md"), []byte(original))
		s.run("e2e: ask the architect", "--title", "e2e")
		if u := api.Unused(); len(u) > 0 {
			t.Fatalf("turns never reached: %v", u)
		}
		for i, reason := range []string{"no_file_edit", "no_file_edit", "no_task_create", "notes.md"} {
			refused(t, api, calls, i, reason)
		}
		check(t, s)
	})
	t.Run("apply_patch", func(t *testing.T) {
		t.Parallel()
		calls := []fc.Call{call("a_patch", "apply_patch", map[string]any{"patchText": "*** Begin Patch\n*** Add File: patched.md\n+design\n*** Update File: notes.md\n@@\n-original notes\n+patched notes\n*** End Patch"})}
		api := architectScript("ARCH-PATCH", calls)
		defer api.Close()
		s := newSession(t, api, sessionOpts{nexus: true, model: "gpt-5-fake"})
		stripPermissions(t, s, "architect")
		writeFile(t, filepath.Join(s.proj, "notes.md"), []byte(original))
		s.run("e2e: ask the architect", "--title", "e2e")
		if u := api.Unused(); len(u) > 0 {
			t.Fatalf("turns never reached: %v", u)
		}
		first, _ := api.Answered("a_patch")
		if !first.Chat.HasTool("apply_patch") {
			t.Fatalf("the architect is not offered apply_patch: %v", first.Chat.ToolNames())
		}
		refused(t, api, calls, 0, "no_file_edit")
		check(t, s)
	})
}

// TestE2EOpenCodeBareEnvironment: OpenCode started with only a launcher's
// environment (HOME, the XDG folders, PATH=/usr/bin:/bin: no nexus on it,
// no NEXUS_* variable) still runs nexus through what install wrote: the
// context, the MCP tools and the gate, which refuses an unplanned write
// with its reason.
func TestE2EOpenCodeBareEnvironment(t *testing.T) {
	t.Parallel()
	calls := []fc.Call{
		call("b_write", "write", map[string]any{"filePath": "notes.md", "content": "x\n"}),
		call("b_list", mcpName("nx_task_list"), map[string]any{}),
	}
	api := fc.New(chain(fc.Prompt("e2e: bare"), calls, fc.Turn{Name: "final", Reply: fc.Reply{Text: "Done."}})...)
	defer api.Close()
	s := newSession(t, api, sessionOpts{nexus: true, env: []string{"PATH=/usr/bin:/bin"}})
	for _, kv := range s.env {
		if strings.HasPrefix(kv, "PATH=") && strings.Contains(kv, binDir) {
			t.Fatalf("nexus is on the session's PATH: %s", kv)
		}
	}
	s.run("e2e: bare", "--title", "e2e")
	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("turns never reached: %v", u)
	}
	first, _ := api.Answered("b_write")
	if !strings.Contains(first.Chat.FirstUserText(), "nexus is active for this project (nexus-core 0.10.0, harness id opencode)") {
		t.Errorf("no session context: %.300q", first.Chat.FirstUserText())
	}
	if got := result(t, api, "b_list", "b_write"); !strings.Contains(got, "nexus denied write of notes.md: edits outside a planned task cycle") {
		t.Errorf("the unplanned write came back %q", got)
	}
	if _, err := os.Stat(filepath.Join(s.proj, "notes.md")); err == nil {
		t.Error("the unplanned write ran")
	}
	if got := result(t, api, "final", "b_list"); !strings.Contains(got, "exists") {
		t.Errorf("nexus_nx_task_list returned %q", got)
	}
	ended(t, s.proj)
}
