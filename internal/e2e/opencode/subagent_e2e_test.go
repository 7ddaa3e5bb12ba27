//go:build e2e

package opencode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fc "github.com/nexus-harness/nexus/internal/fakechat"
)

// TestE2EOpenCodeSubagentSkillPatch: with a GPT-style model id OpenCode
// offers apply_patch instead of write and edit; the task tool runs a
// project agent (.opencode/agents/architect.md) in a child session whose
// system prompt is the agent's body, whose tools follow its permission,
// and which the plugin sees through session.created (parentID, agent) and
// the child's chat.message; the skill tool loads a project skill.
func TestE2EOpenCodeSubagentSkillPatch(t *testing.T) {
	t.Parallel()
	const prompt = "e2e: delegate"
	api := fc.New(
		fc.Turn{Name: "task", When: fc.Prompt(prompt), Reply: fc.Reply{Calls: []fc.Call{
			{ID: "call_task", Name: "task", Args: map[string]any{"description": "Design it", "prompt": "ARCH-PROMPT design the store", "subagent_type": "architect"}}}}},
		fc.Turn{Name: "arch-bash", When: fc.Prompt("ARCH-PROMPT"), Reply: fc.Reply{Calls: []fc.Call{
			{ID: "call_arch_bash", Name: "bash", Args: map[string]any{"command": "echo from-architect", "description": "Say"}}}}},
		fc.Turn{Name: "arch-patch", When: fc.After("call_arch_bash"), Reply: fc.Reply{Calls: []fc.Call{
			{ID: "call_arch_patch", Name: "apply_patch", Args: map[string]any{"patchText": "*** Begin Patch\n*** Add File: arch.txt\n+no\n*** End Patch"}}}}},
		fc.Turn{Name: "arch-final", When: fc.After("call_arch_patch"), Reply: fc.Reply{Text: "ARCH-DONE"}},
		fc.Turn{Name: "skill", When: fc.After("call_task"), Reply: fc.Reply{Calls: []fc.Call{
			{ID: "call_skill", Name: "skill", Args: map[string]any{"name": "probe-skill"}}}}},
		fc.Turn{Name: "patch", When: fc.After("call_skill"), Reply: fc.Reply{Calls: []fc.Call{
			{ID: "call_patch", Name: "apply_patch", Args: map[string]any{"patchText": "*** Begin Patch\n*** Add File: lead.txt\n+from the lead\n*** End Patch"}}}}},
		fc.Turn{Name: "final", When: fc.After("call_patch"), Reply: fc.Reply{Text: "LEAD-DONE"}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{plugins: []string{"probe.js"}, model: "gpt-5-fake"})
	writeFile(t, filepath.Join(s.proj, ".opencode", "agents", "architect.md"), []byte("---\ndescription: Designs the store (e2e agent)\nmode: subagent\npermission:\n  edit: deny\n---\nARCHITECT-BODY-MARKER You are the architect.\n"))
	writeFile(t, filepath.Join(s.proj, ".opencode", "skills", "probe-skill", "SKILL.md"), []byte("---\nname: probe-skill\ndescription: An e2e skill\n---\nSKILL-BODY-MARKER Follow the steps.\n"))
	r := s.run(prompt, "--title", "e2e")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("turns never reached: %v\nstderr: %s", u, tail(r.stderr, 3000))
	}
	if got := r.text(); got != "LEAD-DONE" {
		t.Errorf("printed text %q", got)
	}
	if n := len(api.Titles()); n != 0 {
		t.Errorf("%d title requests with --title, want none", n)
	}
	lead, _ := api.Answered("task")
	for tool, want := range map[string]bool{"apply_patch": true, "write": false, "edit": false, "task": true, "skill": true, "bash": true} {
		if lead.Chat.HasTool(tool) != want {
			t.Errorf("lead: tool %s offered %v, want %v; offered %v", tool, !want, want, lead.Chat.ToolNames())
		}
	}
	if task, _ := lead.Chat.Tool("task"); !strings.Contains(task.Function.Description, "- architect: Designs the store (e2e agent)") {
		t.Errorf("the task tool does not list the agent: %q", task.Function.Description)
	}
	if !strings.Contains(lead.Chat.SystemText(), "<name>probe-skill</name>") {
		t.Error("the lead's system prompt does not list the skill")
	}

	child, _ := api.Answered("arch-bash")
	sys := child.Chat.SystemText()
	if !strings.HasPrefix(sys, "ARCHITECT-BODY-MARKER") || strings.Contains(sys, "You are opencode") || !strings.Contains(sys, "PROBE-SYSTEM-ADDITION") {
		t.Errorf("the child's system prompt should be the agent's body (then OpenCode's environment and skills, then the plugin's line): %.400q", sys)
	}
	if got := child.Chat.FirstUserText(); got != "ARCH-PROMPT design the store\nPROBE-SYNTHETIC-CONTEXT\n" {
		t.Errorf("the child's first user message %q", got)
	}
	for _, tool := range []string{"apply_patch", "write", "edit", "task", "todowrite"} {
		if child.Chat.HasTool(tool) {
			t.Errorf("the architect (edit: deny, a subagent) is offered %s", tool)
		}
	}
	if !child.Chat.HasTool("bash") || !child.Chat.HasTool("nexus_nx_task_list") {
		t.Errorf("the architect lacks bash or the MCP tools: %v", child.Chat.ToolNames())
	}
	refused, _ := api.Answered("arch-final")
	if res, _ := refused.Chat.ToolResult("call_arch_patch"); !strings.HasPrefix(res.Content.Text(), "The arguments provided to the tool are invalid: Model tried to call unavailable tool 'apply_patch'.") {
		t.Errorf("the architect's refused patch got %q", res.Content.Text())
	}
	if _, err := os.Stat(filepath.Join(s.proj, "arch.txt")); !os.IsNotExist(err) {
		t.Errorf("arch.txt: %v", err)
	}
	afterTask, _ := api.Answered("skill")
	res, _ := afterTask.Chat.ToolResult("call_task")
	if !strings.HasPrefix(res.Content.Text(), `<task id="ses_`) || !strings.Contains(res.Content.Text(), "<task_result>\nARCH-DONE\n</task_result>") {
		t.Errorf("the task result %q", res.Content.Text())
	}
	afterSkill, _ := api.Answered("patch")
	if res, _ := afterSkill.Chat.ToolResult("call_skill"); !strings.HasPrefix(res.Content.Text(), "<skill_content name=\"probe-skill\">\n# Skill: probe-skill\n\nSKILL-BODY-MARKER") {
		t.Errorf("the skill result %q", res.Content.Text())
	}
	if b, err := os.ReadFile(filepath.Join(s.proj, "lead.txt")); err != nil || string(b) != "from the lead\n" {
		t.Errorf("lead.txt: %q %v", b, err)
	}

	// The plugin's view: two sessions, the child with its parent and agent.
	type info struct {
		ID       string `json:"id"`
		ParentID string `json:"parentID"`
		Agent    string `json:"agent"`
		Title    string `json:"title"`
	}
	var sessions []info
	var childMsg, taskAfter json.RawMessage
	var hooks []string
	for _, c := range s.probeCalls() {
		var in struct {
			Event struct {
				Properties struct {
					Info info `json:"info"`
				} `json:"properties"`
			} `json:"event"`
			SessionID string `json:"sessionID"`
			Tool      string `json:"tool"`
			Agent     string `json:"agent"`
		}
		json.Unmarshal(c.Input, &in)
		switch {
		case c.eventType() == "session.created":
			sessions = append(sessions, in.Event.Properties.Info)
		case c.Hook == "chat.message" && in.Agent != "":
			childMsg = c.Input
		case c.Hook == "tool.execute.after" && in.Tool == "task":
			taskAfter = c.Output
		}
		if strings.HasPrefix(c.Hook, "tool.execute") {
			hooks = append(hooks, c.Hook+" "+in.Tool)
		}
	}
	if len(sessions) != 2 || sessions[0].ParentID != "" || sessions[1].ParentID != sessions[0].ID || sessions[1].Agent != "architect" || sessions[1].Title != "Design it (@architect subagent)" {
		t.Fatalf("sessions created: %+v", sessions)
	}
	var msg struct {
		SessionID string `json:"sessionID"`
		Agent     string `json:"agent"`
		MessageID string `json:"messageID"`
	}
	json.Unmarshal(childMsg, &msg)
	if msg.SessionID != sessions[1].ID || msg.Agent != "architect" || msg.MessageID == "" {
		t.Errorf("the child's chat.message input %s", childMsg)
	}
	var out struct {
		Metadata struct {
			SessionID       string `json:"sessionId"`
			ParentSessionID string `json:"parentSessionId"`
		} `json:"metadata"`
	}
	json.Unmarshal(taskAfter, &out)
	if out.Metadata.SessionID != sessions[1].ID || out.Metadata.ParentSessionID != sessions[0].ID {
		t.Errorf("the task's tool.execute.after output %s", taskAfter)
	}
	// The refused call reaches the hooks as the "invalid" tool.
	wantHooks := []string{"tool.execute.before task", "tool.execute.before bash", "tool.execute.after bash", "tool.execute.before invalid", "tool.execute.after invalid",
		"tool.execute.after task", "tool.execute.before skill", "tool.execute.after skill", "tool.execute.before apply_patch", "tool.execute.after apply_patch"}
	if !slices.Equal(hooks, wantHooks) {
		t.Errorf("tool hooks:\n%s\nwant\n%s", strings.Join(hooks, "\n"), strings.Join(wantHooks, "\n"))
	}
}
