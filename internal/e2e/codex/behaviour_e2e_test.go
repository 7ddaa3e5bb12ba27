//go:build e2e

package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	fr "github.com/nexus-harness/nexus/internal/fakeresponses"
)

// answeringHooks answers each event the way a harness would, after
// logging it: context on SessionStart (naming the source), on
// UserPromptSubmit (10,001 bytes when the prompt says BIG-CONTEXT, exactly
// 10,000 for EXACT-CONTEXT), after every tool (PostToolUse) and for every
// subagent (SubagentStart); a PreToolUse deny for any call that mentions
// DENY-ME.
const answeringHooks = `source=$(printf '%s' "$payload" | sed -n 's/.*"source":"\([a-z]*\)".*/\1/p')
case "$1" in
SessionStart) printf '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"SESSION-START-CONTEXT %s"}}' "$source" ;;
UserPromptSubmit)
	case "$payload" in
	*BIG-CONTEXT*) printf '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"%s"}}' "$(head -c 10001 /dev/zero | tr '\0' b)" ;;
	*EXACT-CONTEXT*) printf '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"%s"}}' "$(head -c 10000 /dev/zero | tr '\0' e)" ;;
	*) printf '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"PROMPT-CONTEXT"}}' ;;
	esac ;;
PreToolUse)
	case "$payload" in
	*DENY-ME*) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"nexus-test-deny"}}' ;;
	esac ;;
PostToolUse) printf '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"POST-CONTEXT"}}' ;;
SubagentStart) printf '{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"SUBAGENT-START-CONTEXT"}}' ;;
esac
`

const (
	deniedPatch  = "*** Begin Patch\n*** Add File: denied.txt\n+DENY-ME\n*** End Patch\n"
	allowedPatch = "*** Begin Patch\n*** Add File: ok.txt\n+ok\n*** End Patch\n"
	heredoc      = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: heredoc.txt\n+from the shell\n*** End Patch\nEOF\n"
)

// messageIndex returns the index of the first message of the role whose
// text contains s, or -1.
func messageIndex(r *fr.ResponsesRequest, role, s string) int {
	for i, it := range r.Input {
		if it.Type == "message" && it.Role == role && strings.Contains(it.Content.Text(), s) {
			return i
		}
	}
	return -1
}

// TestE2ECodexHookBehaviour pins what a Codex host must rely on: where
// each hook context reaches the model, the text a PreToolUse deny becomes
// for a shell command, an apply_patch and an MCP tool, that a denied call
// writes nothing, and that apply_patch sent through the shell as a heredoc
// arrives as "Bash" with a PreToolUse and no PostToolUse.
func TestE2ECodexHookBehaviour(t *testing.T) {
	t.Parallel()
	api := fr.New(
		fr.Turn{Name: "deny-shell", When: fr.Prompt("e2e: behaviour"), Reply: fr.Reply{Calls: []fr.Call{fr.Function("c_deny_sh", "exec_command", map[string]any{"cmd": "echo DENY-ME > denied.txt"})}}},
		fr.Turn{Name: "deny-patch", When: fr.After("c_deny_sh"), Reply: fr.Reply{Calls: []fr.Call{fr.Custom("c_deny_patch", "apply_patch", deniedPatch)}}},
		fr.Turn{Name: "heredoc", When: fr.After("c_deny_patch"), Reply: fr.Reply{Calls: []fr.Call{fr.Function("c_heredoc", "exec_command", map[string]any{"cmd": heredoc})}}},
		fr.Turn{Name: "patch", When: fr.After("c_heredoc"), Reply: fr.Reply{Calls: []fr.Call{fr.Custom("c_patch", "apply_patch", allowedPatch)}}},
		fr.Turn{Name: "search", When: fr.After("c_patch"), Reply: fr.Reply{Calls: []fr.Call{fr.ToolSearch("c_search", "nexus task add")}}},
		fr.Turn{Name: "deny-mcp", When: fr.After("c_search"), Reply: fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_deny_mcp", "mcp__nexus", "nx_task_add", map[string]any{"title": "DENY-ME"})}}},
		fr.Turn{Name: "answer", When: fr.After("c_deny_mcp"), Reply: fr.Reply{Text: "Behaviour done."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{hooks: true, mcp: true, hookScript: answeringHooks})
	s.run("e2e: behaviour")
	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	last, _ := api.Answered("answer")
	rq := last.Responses

	// SessionStart's context is a developer message after the environment
	// context and before the prompt; UserPromptSubmit's follows the prompt.
	env, ss, prompt, ups := messageIndex(rq, "user", "<environment_context>"), messageIndex(rq, "developer", "SESSION-START-CONTEXT startup"),
		messageIndex(rq, "user", "e2e: behaviour"), messageIndex(rq, "developer", "PROMPT-CONTEXT")
	if !(env >= 0 && env < ss && ss < prompt && prompt < ups) {
		t.Errorf("message order: environment %d, SessionStart context %d, prompt %d, UserPromptSubmit context %d", env, ss, prompt, ups)
	}

	// Denied calls: the reason reaches the model in a fixed sentence and
	// nothing is written.
	denied := []struct{ call, want string }{
		{"c_deny_sh", "Command blocked by PreToolUse hook: nexus-test-deny. Command: echo DENY-ME > denied.txt"},
		{"c_deny_patch", "Command blocked by PreToolUse hook: nexus-test-deny. Command: " + deniedPatch},
		{"c_deny_mcp", "Tool call blocked by PreToolUse hook: nexus-test-deny. Tool: mcp__nexus__nx_task_add"},
	}
	for _, d := range denied {
		out, ok := rq.Output(d.call)
		if !ok || out.Output.Text() != d.want+"\n" {
			t.Errorf("%s output %q, want %q", d.call, out.Output.Text(), d.want)
		}
	}
	if _, err := os.Stat(filepath.Join(s.proj, "denied.txt")); !os.IsNotExist(err) {
		t.Errorf("a denied call wrote denied.txt (%v)", err)
	}

	// PostToolUse's context is a developer message between the call and
	// its output.
	call, post, out := -1, -1, -1
	for i, it := range rq.Input {
		switch {
		case it.Type == "custom_tool_call" && it.CallID == "c_patch":
			call = i
		case call >= 0 && post < 0 && it.Type == "message" && it.Role == "developer" && strings.Contains(it.Content.Text(), "POST-CONTEXT"):
			post = i
		case it.Type == "custom_tool_call_output" && it.CallID == "c_patch":
			out = i
		}
	}
	if !(call >= 0 && call < post && post < out) {
		t.Errorf("apply_patch call %d, PostToolUse context %d, output %d", call, post, out)
	}

	// The hooks: tool names and inputs per call, and the heredoc's missing
	// PostToolUse.
	type toolHook struct{ event, tool, id string }
	var got []toolHook
	inputs := map[string]any{}
	for _, h := range s.hooks() {
		if h.Event != "PreToolUse" && h.Event != "PostToolUse" {
			continue
		}
		id, _ := h.Payload["tool_use_id"].(string)
		tool, _ := h.Payload["tool_name"].(string)
		got = append(got, toolHook{h.Event, tool, id})
		inputs[id] = h.Payload["tool_input"]
	}
	want := []toolHook{
		{"PreToolUse", "Bash", "c_deny_sh"},
		{"PreToolUse", "apply_patch", "c_deny_patch"},
		{"PreToolUse", "Bash", "c_heredoc"},
		{"PreToolUse", "apply_patch", "c_patch"}, {"PostToolUse", "apply_patch", "c_patch"},
		{"PreToolUse", "mcp__nexus__nx_task_add", "c_deny_mcp"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("tool hooks\n got %v\nwant %v", got, want)
	}
	for id, want := range map[string]string{
		"c_deny_patch": fmt.Sprint(map[string]any{"command": deniedPatch}),
		"c_heredoc":    fmt.Sprint(map[string]any{"command": heredoc}),
		"c_deny_mcp":   fmt.Sprint(map[string]any{"title": "DENY-ME"}),
	} {
		if fmt.Sprint(inputs[id]) != want {
			t.Errorf("%s tool_input %v, want %s", id, inputs[id], want)
		}
	}
	for _, f := range []string{"heredoc.txt", "ok.txt"} {
		if _, err := os.Stat(filepath.Join(s.proj, f)); err != nil {
			t.Errorf("an allowed patch did not write %s: %v", f, err)
		}
	}
}

const architectAgent = `name = "architect"
description = "Designs the change; never edits source files."
developer_instructions = """
ARCHITECT-ROLE-BODY: you are the architect.
"""
`

var agentIDRe = regexp.MustCompile(`"agent_id":"([^"]+)"`)

// TestE2ECodexSubagentLifecycle: a custom agent in .codex/agents spawned
// by agent_type (after tool_search finds the multi-agent tools), awaited,
// resumed with send_input and awaited again. It pins the hook events of
// each step, the tool names hooks see, what the subagent's first request
// carries, and the hook-context limit: 10,000 bytes arrive whole, 10,001
// become a preview and a file path.
func TestE2ECodexSubagentLifecycle(t *testing.T) {
	t.Parallel()
	arch := fr.DeveloperHas("ARCHITECT-ROLE-BODY")
	lead := fr.Not(arch)
	const ns = "multi_agent_v1"
	agent := func(r *fr.ResponsesRequest) string {
		out, _ := r.Output("c_spawn")
		m := agentIDRe.FindStringSubmatch(out.Output.Text())
		if m == nil {
			t.Errorf("spawn_agent output without an agent id: %q", out.Output.Text())
			return ""
		}
		return m[1]
	}
	api := fr.New(
		fr.Turn{Name: "search", When: fr.All(lead, fr.Prompt("e2e: agents")), Reply: fr.Reply{Calls: []fr.Call{{Kind: fr.KindToolSearch, ID: "c_search", Args: map[string]any{"query": "spawn agent wait send input", "limit": 10}}}}},
		fr.Turn{Name: "spawn", When: fr.All(lead, fr.After("c_search")), Reply: fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_spawn", ns, "spawn_agent", map[string]any{"agent_type": "architect", "message": "SUBTASK-ONE EXACT-CONTEXT"})}}},
		fr.Turn{Name: "sub-one", When: fr.All(arch, fr.Prompt("SUBTASK-ONE")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("c_sub_sh", "exec_command", map[string]any{"cmd": "true"})}}},
		fr.Turn{Name: "sub-one-answer", When: fr.All(arch, fr.After("c_sub_sh")), Reply: fr.Reply{Text: "architect done ONE"}},
		fr.Turn{Name: "wait-one", When: fr.All(lead, fr.After("c_spawn")), Do: func(r *fr.ResponsesRequest) fr.Reply {
			return fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_wait1", ns, "wait_agent", map[string]any{"targets": []string{agent(r)}, "timeout_ms": 60000})}}
		}},
		fr.Turn{Name: "send", When: fr.All(lead, fr.After("c_wait1")), Do: func(r *fr.ResponsesRequest) fr.Reply {
			return fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_send", ns, "send_input", map[string]any{"target": agent(r), "message": "SUBTASK-TWO"})}}
		}},
		fr.Turn{Name: "sub-two", When: fr.All(arch, fr.Prompt("SUBTASK-TWO")), Reply: fr.Reply{Text: "architect done TWO"}},
		fr.Turn{Name: "wait-two", When: fr.All(lead, fr.After("c_send")), Do: func(r *fr.ResponsesRequest) fr.Reply {
			return fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_wait2", ns, "wait_agent", map[string]any{"targets": []string{agent(r)}, "timeout_ms": 60000})}}
		}},
		fr.Turn{Name: "answer", When: fr.All(lead, fr.After("c_wait2")), Reply: fr.Reply{Text: "Agents done."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{hooks: true, hookScript: answeringHooks, agents: map[string]string{"architect": architectAgent}})
	s.run("e2e: agents BIG-CONTEXT")
	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	spawnReq, _ := api.Answered("wait-one")
	id := agent(spawnReq.Responses)

	// The spawn tool takes agent_type, listing the custom agent.
	first, _ := api.Answered("spawn")
	found, _ := first.Responses.Output("c_search")
	var spawnTool fr.Tool
	for _, tl := range found.Tools {
		for _, sub := range tl.Tools {
			if tl.Name == ns && sub.Name == "spawn_agent" {
				spawnTool = sub
			}
		}
	}
	if !strings.Contains(string(spawnTool.Parameters), `"agent_type"`) || !strings.Contains(string(spawnTool.Parameters), "architect: {") {
		t.Errorf("spawn_agent parameters do not offer agent_type architect: %s", spawnTool.Parameters)
	}

	// Hook events: one SubagentStart, the subagent's prompts as
	// UserPromptSubmit with its agent_id (a resume fires no SubagentStart),
	// a SubagentStop per subagent turn, Stop and SessionStart for the Lead
	// only.
	hooks := s.hooks()
	session := hooks[0].Payload["session_id"]
	count := map[string]int{}
	var subPrompts, subStops, leadTools []string
	for _, h := range hooks {
		aid, _ := h.Payload["agent_id"].(string)
		key := h.Event
		if aid != "" {
			key += " (subagent)"
			if aid != id || h.Payload["agent_type"] != "architect" {
				t.Errorf("%s: agent_id %v agent_type %v, want %s architect", h.Event, aid, h.Payload["agent_type"], id)
			}
		}
		count[key]++
		if h.Payload["session_id"] != session {
			t.Errorf("%s: session_id %v, want the Lead's %v", key, h.Payload["session_id"], session)
		}
		switch {
		case h.Event == "UserPromptSubmit" && aid != "":
			subPrompts = append(subPrompts, fmt.Sprint(h.Payload["prompt"]))
		case h.Event == "SubagentStop":
			subStops = append(subStops, fmt.Sprint(h.Payload["last_assistant_message"]))
			if p, _ := h.Payload["agent_transcript_path"].(string); !strings.Contains(p, id) {
				t.Errorf("SubagentStop agent_transcript_path %q does not name the agent", p)
			}
		case h.Event == "PreToolUse" && aid == "":
			leadTools = append(leadTools, fmt.Sprint(h.Payload["tool_name"]))
		}
	}
	wantCount := map[string]int{
		"SessionStart": 1, "UserPromptSubmit": 1, "Stop": 1, "SessionEnd": 1,
		"SubagentStart (subagent)": 1, "UserPromptSubmit (subagent)": 2, "SubagentStop (subagent)": 2,
		"PreToolUse": 4, "PostToolUse": 4, "PreToolUse (subagent)": 1, "PostToolUse (subagent)": 1,
	}
	if fmt.Sprint(count) != fmt.Sprint(wantCount) {
		t.Errorf("hook events\n got %v\nwant %v", count, wantCount)
	}
	if !slices.Equal(subPrompts, []string{"SUBTASK-ONE EXACT-CONTEXT", "SUBTASK-TWO"}) || !slices.Equal(subStops, []string{"architect done ONE", "architect done TWO"}) {
		t.Errorf("subagent prompts %q, stops %q", subPrompts, subStops)
	}
	// spawn_agent keeps its name; the other multi-agent tools arrive with
	// the namespace glued on.
	if want := []string{"spawn_agent", "multi_agent_v1wait_agent", "multi_agent_v1send_input", "multi_agent_v1wait_agent"}; !slices.Equal(leadTools, want) {
		t.Errorf("Lead PreToolUse tool names %q, want %q", leadTools, want)
	}

	// The subagent's first request: Codex's base instructions, then a
	// developer message whose first part is the role's
	// developer_instructions (the skills list and the permissions follow as
	// further parts), the environment, SubagentStart's context, the
	// message, then the prompt context of exactly 10,000 bytes, whole.
	sub, _ := api.Answered("sub-one")
	rq := sub.Responses
	role, env, start, msg := messageIndex(rq, "developer", "ARCHITECT-ROLE-BODY"), messageIndex(rq, "user", "<environment_context>"),
		messageIndex(rq, "developer", "SUBAGENT-START-CONTEXT"), messageIndex(rq, "user", "SUBTASK-ONE")
	if !(role > 0 && role < env && env < start && start < msg) {
		t.Errorf("subagent message order: role %d, environment %d, SubagentStart context %d, message %d", role, env, start, msg)
	}
	if role > 0 {
		if got := rq.Input[role].Content[0].Text; got != "ARCHITECT-ROLE-BODY: you are the architect.\n" {
			t.Errorf("role developer message's first part %q", got)
		}
	}
	if i := messageIndex(rq, "developer", strings.Repeat("e", 10000)); i < 0 || len(rq.Input[i].Content[0].Text) != 10000 {
		t.Errorf("a 10,000-byte hook context did not arrive whole")
	}
	if slices.ContainsFunc(rq.ToolNames(), func(n string) bool { return strings.HasPrefix(n, ns) }) || rq.HasTool("tool_search") {
		t.Errorf("the subagent (depth 1) is offered agent tools: %v", rq.ToolNames())
	}

	// The Lead's 10,001-byte prompt context became a preview and a path
	// under TMPDIR/hook_outputs/<thread id>/.
	big := messageIndex(first.Responses, "developer", "Full hook output saved to: ")
	if big < 0 {
		t.Fatal("the 10,001-byte hook context was not replaced by a preview")
	}
	text := first.Responses.Input[big].Content[0].Text
	path := text[strings.LastIndex(text, "saved to: ")+len("saved to: "):]
	if !strings.HasPrefix(text, "Warning: truncated output") || !strings.HasPrefix(path, filepath.Join(s.root, "tmp", "hook_outputs")+"/") {
		t.Errorf("preview %.120q … path %q", text, path)
	}
	if b, err := os.ReadFile(path); err != nil || len(b) != 10001 {
		t.Errorf("the saved hook output: %d bytes, %v", len(b), err)
	}
	// The Lead learns of a finished subagent from a user message too.
	if wait, _ := api.Answered("send"); messageIndex(wait.Responses, "user", "<subagent_notification>") < 0 {
		t.Errorf("no subagent notification before send_input")
	}
}

// TestE2ECodexCompaction: auto-compaction (a token limit of 100) runs
// PreCompact and PostCompact (trigger auto) and then SessionStart again
// with source "compact"; Codex asks the model for the summary through
// POST /v1/responses with no tools.
func TestE2ECodexCompaction(t *testing.T) {
	t.Parallel()
	api := fr.New(
		fr.Turn{Name: "summary", When: fr.Compaction(), Reply: fr.Reply{Text: "SUMMARY-OF-CONVERSATION"}, Repeat: true},
		fr.Turn{Name: "shell", When: fr.Prompt("e2e: compact"), Reply: fr.Reply{Calls: []fr.Call{fr.Function("c_sh", "exec_command", map[string]any{"cmd": "true"})}}},
		fr.Turn{Name: "answer", When: fr.AnyText("SUMMARY-OF-CONVERSATION"), Reply: fr.Reply{Text: "Compacted."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{hooks: true, hookScript: answeringHooks, topConfig: "model_auto_compact_token_limit = 100\n"})
	s.run("e2e: compact")
	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	req, _ := api.Answered("summary")
	if len(req.Responses.Tools) != 0 {
		t.Errorf("the compaction request offers tools: %v", req.Responses.ToolNames())
	}
	var seq []string
	for _, h := range s.hooks() {
		e := h.Event
		if v, ok := h.Payload["trigger"]; ok {
			e += " " + fmt.Sprint(v)
		}
		if v, ok := h.Payload["source"]; ok {
			e += " " + fmt.Sprint(v)
		}
		seq = append(seq, e)
	}
	want := []string{"SessionStart startup", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact auto", "PostCompact auto", "SessionStart compact", "Stop", "SessionEnd"}
	if !slices.Equal(seq, want) {
		t.Errorf("hook events\n got %q\nwant %q", seq, want)
	}
	// SessionStart's context after compaction names its source.
	after, _ := api.Answered("answer")
	if messageIndex(after.Responses, "developer", "SESSION-START-CONTEXT compact") < 0 {
		t.Errorf("no SessionStart context after compaction")
	}
}
