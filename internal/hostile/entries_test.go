package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// step is one entry point run: one nexus process.
type step struct {
	name  string // as a failure names it: "hook PreToolUse architect Write (deep)"
	args  []string
	stdin []byte
	env   []string // added to the scenario's environment
	// may lists what the step may change, as patterns relative to the
	// scenario root ("clone/.nexus/**": the folder and everything in it;
	// otherwise path.Match patterns). Everything else must stay as it was.
	may []string
	// deny: the step is a PreToolUse the gate must deny; the reply's
	// protocol ("claude" or "neutral").
	deny string
}

// What entry points may change ("the project's own files"):
//
//   - state: .nexus/ and everything in it — runtime state, history, and
//     the tracked memory/, rules/ and context/ that tools and tags write —
//     except the project's configuration (.nexus/nexus.yaml) and its
//     plugins (.nexus/plugins/), which nexus never writes;
//   - store: the project's decision store (design/, set in nexus.yaml),
//     for the decision tools and commands;
//   - install: exactly the files `nexus install claude` derives — the
//     settings file, the MCP file, the record, one agent file per role
//     and one SKILL.md per skill of the distribution, and their
//     *.nexus-backup-* copies — in the project (project scope) or under
//     home/ (user scope); and those `nexus install opencode` derives
//     (opencode.json, the plugin, the record, the agents and skills);
//   - the output folder of `--plugin DIR` and `core extract DIR`.
//
// Nothing may change in outside/, src/, the clone's .git, home/ (but for
// the user scope and nexus's configuration cache, cacheMay) or anywhere
// else in the project.
var (
	stateMay = []string{"clone/.nexus", "clone/.nexus/**"}
	// neverMay wins over may: the configuration and the plugins the
	// repository ships are its own, never nexus's.
	neverMay = []string{"clone/.nexus/nexus.yaml", "clone/.nexus/plugins/**"}
	storeMay = []string{"clone/design/**"}
	// cacheMay is nexus's configuration resolution cache in the user's
	// cache folder (internal/config/cache.go), which any step may write:
	// the doctor's probes run the registered commands in the host's
	// environment, without XDG_CACHE_HOME, so it lands under home/.cache.
	// Each file is a resolution nexus derived (every value checked, the
	// name a hash of its inputs), never the repository's bytes.
	cacheMay = []string{"home/.cache", "home/.cache/nexus", "home/.cache/nexus/config", "home/.cache/nexus/config/**"}
)

// installMay lists the files install derives under dir (clone/.claude or
// home/.claude) and the MCP file (clone/.mcp.json or home/.claude.json).
func installMay(dir, mcp string) []string {
	files := []string{dir + "/settings.json", dir + "/nexus-install.json", mcp}
	dirs := []string{dir, dir + "/agents", dir + "/skills"}
	for _, a := range coreRoles() {
		files = append(files, dir+"/agents/"+a+".md")
	}
	for _, s := range coreSkills() {
		dirs = append(dirs, dir+"/skills/"+s)
		files = append(files, dir+"/skills/"+s+"/SKILL.md")
	}
	out := dirs
	for _, f := range files {
		out = append(out, f, f+".nexus-backup-*")
	}
	return out
}

// openCodeMay lists the files `nexus install opencode` derives: the
// config file in cfgDir (clone/ or the user's OpenCode folder) and, in
// the OpenCode folder dir, the plugin, the record, one agent file per role
// and one SKILL.md per skill of the distribution.
func openCodeMay(cfgDir, dir string) []string {
	files := []string{cfgDir + "/opencode.json", cfgDir + "/opencode.jsonc", dir + "/plugins/nexus.js", dir + "/nexus-install.json"}
	dirs := []string{dir, dir + "/plugins", dir + "/agents", dir + "/skills"}
	for _, a := range coreRoles() {
		files = append(files, dir+"/agents/"+a+".md")
	}
	for _, s := range coreSkills() {
		if s == "nx-setup" {
			continue // Claude Code's alone
		}
		dirs = append(dirs, dir+"/skills/"+s)
		files = append(files, dir+"/skills/"+s+"/SKILL.md")
	}
	out := dirs
	for _, f := range files {
		out = append(out, f, f+".nexus-backup-*")
	}
	return out
}

var (
	manifestOnce sync.Once
	roles        []string
	skills       []string
)

// coreRoles and coreSkills are the agents and skills of the built-in
// distribution (the vendored copy nexus embeds), plus nexus's own
// nx-setup skill: what install derives files for.
func coreRoles() []string  { loadManifest(); return roles }
func coreSkills() []string { loadManifest(); return skills }

func loadManifest() {
	manifestOnce.Do(func() {
		var m struct {
			Agents []struct{ ID string } `json:"agents"`
			Skills []struct{ ID string } `json:"skills"`
		}
		b, err := os.ReadFile(filepath.Join(moduleRoot, "third_party", "nexus-core", "dist", "manifest.json"))
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil || len(m.Agents) == 0 {
			panic(fmt.Sprintf("the vendored manifest: %v", err))
		}
		for _, a := range m.Agents {
			roles = append(roles, a.ID)
		}
		for _, s := range m.Skills {
			skills = append(skills, s.ID)
		}
		skills = append(skills, "nx-setup")
	})
}

// moduleRoot is set by the test (testenv.ModuleRoot).
var moduleRoot string

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// tracks returns a track's steps for one scenario: a sequence run in one
// clone, in order, each step seeing what the earlier ones left.
func tracks(name string, sc *scenario) ([]step, error) {
	switch name {
	case "install":
		return installTrack(sc), nil
	case "session":
		return sessionTrack(sc)
	case "gate":
		return gateTrack(sc), nil
	case "tools":
		return toolsTrack(sc), nil
	case "prompt-d":
		return promptTrack(sc, "[d] ", 20_000, true), nil
	case "prompt-m":
		return promptTrack(sc, "[m] ", 5_000, false), nil
	case "prompt-rule":
		return promptTrack(sc, "[rule:x] ", 3_000, false), nil
	case "mcp-deep":
		return mcpDeepTrack(sc), nil
	case "hook-huge":
		return hookHugeTrack(sc), nil
	}
	return nil, fmt.Errorf("no track %q", name)
}

var standardTracks = []string{"install", "session", "gate", "tools"}

func installTrack(sc *scenario) []step {
	project := installMay("clone/.claude", "clone/.mcp.json")
	user := installMay("home/.claude", "home/.claude.json")
	ocProject := openCodeMay("clone", "clone/.opencode")
	// OpenCode's user folder is $XDG_CONFIG_HOME/opencode: install makes
	// home/.config too when the user has none.
	ocUser := append(openCodeMay("home/.config/opencode", "home/.config/opencode"), "home/.config")
	return []step{
		{name: "install claude --dry-run", args: []string{"install", "claude", "--dry-run"}},
		{name: "install claude", args: []string{"install", "claude"}, may: project},
		{name: "install claude (again)", args: []string{"install", "claude"}, may: project},
		// doctor runs every check, and its probes run the registered
		// commands; --fix repairs what install wrote.
		{name: "doctor --fix", args: []string{"doctor", "--fix"}, may: concat(stateMay, project)},
		{name: "uninstall claude", args: []string{"uninstall", "claude"}, may: project},
		{name: "install claude --scope user", args: []string{"install", "claude", "--scope", "user"}, may: user},
		{name: "uninstall claude --scope user", args: []string{"uninstall", "claude", "--scope", "user"}, may: user},
		{name: "install claude --plugin claude-plugin", args: []string{"install", "claude", "--plugin", "claude-plugin"}, may: []string{"clone/claude-plugin", "clone/claude-plugin/**"}},
		{name: "install opencode", args: []string{"install", "opencode"}, may: ocProject},
		{name: "install opencode (again)", args: []string{"install", "opencode"}, may: ocProject},
		// The OpenCode probes run the plugin's command lines and its MCP
		// servers; --fix repairs what install wrote.
		{name: "doctor --fix (opencode)", args: []string{"doctor", "--fix"}, may: concat(stateMay, ocProject)},
		{name: "uninstall opencode", args: []string{"uninstall", "opencode"}, may: ocProject},
		{name: "install opencode --scope user", args: []string{"install", "opencode", "--scope", "user"}, may: ocUser},
		{name: "uninstall opencode --scope user", args: []string{"uninstall", "opencode", "--scope", "user"}, may: ocUser},
	}
}

// sessionDir is the recorded Claude Code session (harness/host/claude's
// replay test): every hook payload of a Lead with an architect and an
// engineer, in order, with the MCP calls in between.
func sessionDir() string {
	return filepath.Join(moduleRoot, "harness", "host", "claude", "testdata", "session")
}

// hook is a `nexus hook` step with Claude Code's payload; Claude Code
// runs hooks with CLAUDE_PROJECT_DIR set.
func hook(sc *scenario, name string, payload []byte, args ...string) step {
	return step{
		name:  name,
		args:  append([]string{"hook", "--host", "claude"}, args...),
		stdin: payload,
		env:   []string{"CLAUDE_PROJECT_DIR=" + sc.clone},
		may:   stateMay,
	}
}

// payload renders a Claude Code hook payload for the scenario's clone.
func payload(sc *scenario, fields map[string]any) []byte {
	p := map[string]any{
		"session_id":      "5e55a0b1-0000-4000-8000-000000000001",
		"transcript_path": filepath.Join(sc.home, ".claude", "projects", "t.jsonl"),
		"cwd":             sc.clone,
		"permission_mode": "default",
	}
	for k, v := range fields {
		p[k] = v
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return b
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// withRaw puts raw JSON text at tool_input.extra of a payload.
func withRaw(p []byte, raw []byte) []byte {
	i := bytes.LastIndex(p, []byte(`"tool_input":{`))
	if i < 0 {
		panic("payload without tool_input")
	}
	i += len(`"tool_input":{`)
	out := append([]byte(nil), p[:i]...)
	out = append(out, `"extra":`...)
	out = append(out, raw...)
	out = append(out, ',')
	return append(out, p[i:]...)
}

// architect and lead are the roles of the gate steps.
var (
	architect = map[string]any{"agent_id": "a7c3e91f", "agent_type": "nexus:architect"}
	lead      = map[string]any{}
)

func preToolUse(sc *scenario, who map[string]any, tool string, input map[string]any) []byte {
	f := map[string]any{"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_h"}
	for k, v := range who {
		f[k] = v
	}
	return payload(sc, f)
}

// gateSteps are the writes the gate must deny, for who (its name in the
// step), in every form the attacker can send them.
func gateSteps(sc *scenario, whoName string, who map[string]any, plainToo bool) []step {
	file := filepath.Join(sc.clone, "src", "main.go")
	write := map[string]any{"file_path": file, "content": "package main\n"}
	var out []step
	if plainToo {
		for _, c := range []struct {
			tool  string
			input map[string]any
		}{
			{"Write", write},
			{"Edit", map[string]any{"file_path": file, "old_string": "main", "new_string": "x"}},
			{"MultiEdit", map[string]any{"file_path": file, "edits": []any{map[string]any{"old_string": "main", "new_string": "x"}}}},
			{"NotebookEdit", map[string]any{"notebook_path": filepath.Join(sc.clone, "n.ipynb"), "new_source": "x"}},
			{"Bash", map[string]any{"command": "echo pwned > src/main.go"}},
		} {
			s := hook(sc, "hook PreToolUse "+whoName+" "+c.tool, preToolUse(sc, who, c.tool, c.input))
			s.deny = "claude"
			out = append(out, s)
		}
	}
	deepStep := hook(sc, "hook PreToolUse "+whoName+" Write with an extra field nested 9,999 deep", withRaw(preToolUse(sc, who, "Write", write), deep(deepDepth-1)))
	deepStep.deny = "claude"
	inf := hook(sc, "hook PreToolUse "+whoName+" Write with 1e309 in tool_input", withRaw(preToolUse(sc, who, "Write", write), []byte("1e309")))
	inf.deny = "claude"
	return append(out, deepStep, inf)
}

// neutral is a `nexus hook --host neutral` step.
func neutral(sc *scenario, name string, fields map[string]any) step {
	f := map[string]any{"session_id": "s", "cwd": sc.clone}
	for k, v := range fields {
		f[k] = v
	}
	b, err := json.Marshal(f)
	if err != nil {
		panic(err)
	}
	return step{name: name, args: []string{"hook", "--host", "neutral"}, stdin: b, may: stateMay}
}

func sessionTrack(sc *scenario) ([]step, error) {
	files, err := filepath.Glob(filepath.Join(sessionDir(), "[0-9][0-9]-*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no recorded session in %s: %v", sessionDir(), err)
	}
	sort.Strings(files)
	proj, _ := json.Marshal(sc.clone)
	var out []step
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		text := strings.ReplaceAll(string(raw), "{{PROJECT}}", strings.Trim(string(proj), `"`))
		text = strings.ReplaceAll(text, "{{TESTDATA}}", sessionDir())
		if strings.Contains(name, "-mcp-") {
			var call struct {
				Tool string         `json:"mcp_tool"`
				Args map[string]any `json:"args"`
			}
			if err := json.Unmarshal([]byte(text), &call); err != nil {
				return nil, fmt.Errorf("%s: %v", f, err)
			}
			out = append(out, mcpStep("mcp "+call.Tool+" (session "+name[:2]+")", []string{"mcp", "--without", "decisions"}, []mcpCall{{"nx_" + call.Tool, call.Args}}, stateMay))
			continue
		}
		s := hook(sc, "hook "+name, []byte(text))
		if strings.HasSuffix(name, "-denied") {
			s.deny = "claude"
		}
		out = append(out, s)
		switch {
		case strings.HasSuffix(name, "SubagentStart-architect"):
			out = append(out, statusLine(sc))
		case strings.HasSuffix(name, "SessionStart-compact"):
			// Accepted, nothing to do: each must still come back at once.
			for _, ev := range []string{"PreCompact", "PostCompact"} {
				out = append(out, hook(sc, "hook "+ev, payload(sc, map[string]any{"hook_event_name": ev, "trigger": "auto"})))
			}
		case strings.HasSuffix(name, "UserPromptSubmit-rule"):
			out = append(out,
				hook(sc, "hook UserPromptSubmit [m] save", payload(sc, map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "[m] sqlite busy timeouts need a retry loop with backoff"})),
				hook(sc, "hook UserPromptSubmit [m:gc]", payload(sc, map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "[m:gc] forget what is stale"})))
		}
	}
	return out, nil
}

// gateTrack: every write the gate must deny — the architect's (no_file_edit)
// in each tool, and any payload the gate cannot parse, from the architect
// or the lead — through both protocols, then the neutral life cycle.
func gateTrack(sc *scenario) []step {
	out := gateSteps(sc, "architect", architect, true)
	out = append(out, gateSteps(sc, "lead", lead, false)...)
	deny := func(s step) step { s.deny = "neutral"; return s }
	patch := map[string]any{"event": "pre_tool_use", "agent_id": "n1", "agent_type": "architect", "tool": "apply_patch", "tool_input": map[string]any{"path": "src/main.go"}, "tool_classes": []string{"partial_file_edit"}}
	raw := func(name string, b []byte) step {
		return step{name: name, args: []string{"hook", "--host", "neutral"}, stdin: b, may: stateMay}
	}
	return append(out,
		neutral(sc, "hook --host neutral session_start", map[string]any{"event": "session_start", "source": "startup"}),
		neutral(sc, "hook --host neutral user_message", map[string]any{"event": "user_message", "prompt": "[plan] a neutral plan"}),
		neutral(sc, "hook --host neutral subagent_spawn", map[string]any{"event": "subagent_spawn", "agent_id": "n1", "agent_type": "architect"}),
		deny(neutral(sc, "hook --host neutral pre_tool_use architect apply_patch", patch)),
		deny(raw("hook --host neutral pre_tool_use architect apply_patch with a field nested 9,999 deep", withRaw(must(json.Marshal(patch)), deep(deepDepth-1)))),
		deny(raw("hook --host neutral pre_tool_use architect apply_patch with 1e309", withRaw(must(json.Marshal(patch)), []byte("1e309")))),
		neutral(sc, "hook --host neutral post_tool_use", map[string]any{"event": "post_tool_use", "agent_id": "n1", "agent_type": "architect", "tool": "read_file", "tool_input": map[string]any{"path": ".nexus/memory/empirical-sqlite-lock-timeouts.md"}, "tool_classes": []string{"file_read"}}),
		neutral(sc, "hook --host neutral subagent_complete", map[string]any{"event": "subagent_complete", "agent_id": "n1", "agent_type": "architect", "last_message": "done"}),
		neutral(sc, "hook --host neutral session_end", map[string]any{"event": "session_end"}),
	)
}

// statusLine is Claude Code's status-line call.
func statusLine(sc *scenario) step {
	in, _ := json.Marshal(map[string]any{"session_id": "s", "cwd": sc.clone, "workspace": map[string]any{"current_dir": sc.clone, "project_dir": sc.clone}, "model": map[string]any{"display_name": "Opus"}})
	return step{name: "statusline", args: []string{"statusline"}, stdin: in}
}

// mcpCall is one tools/call.
type mcpCall struct {
	tool string
	args map[string]any
}

// mcpStep is one `nexus mcp` process over stdio: the handshake, then the
// calls, piped as one batch (the server answers each in turn and exits
// at the end of input).
func mcpStep(name string, args []string, calls []mcpCall, may []string) step {
	var b bytes.Buffer
	line := func(v any) {
		j, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	line(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "hostile", "version": "0"}}})
	line(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	line(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
	for i, c := range calls {
		a := c.args
		if a == nil {
			a = map[string]any{}
		}
		line(map[string]any{"jsonrpc": "2.0", "id": i + 2, "method": "tools/call", "params": map[string]any{"name": c.tool, "arguments": a}})
	}
	return step{name: name, args: args, stdin: b.Bytes(), may: may}
}

// decisionCalls are the decision store's tools, each with valid
// arguments.
var decisionCalls = []mcpCall{
	{"list_projects", nil},
	{"list_decisions", map[string]any{"limit": 10}},
	{"get_decision", map[string]any{"number": 2}},
	{"search_decisions", map[string]any{"query": "static binaries"}},
	{"check_decision", map[string]any{"proposed_approach": "Write the command line in Rust instead of Go"}},
	{"get_context", map[string]any{"level": "L1"}},
	{"get_raw_file", map[string]any{"path": "project.md"}},
	{"diff_since_last_session", map[string]any{"days": 7}},
	{"flag_question", map[string]any{"question": "Should hooks cache the manifest?"}},
	{"update_state", map[string]any{"delta": "Hooks are measured."}},
	{"propose_decision", map[string]any{"title": "Keep state files as JSON", "rationale": "JSON is what nexus-core's schemas describe and every harness reads."}},
}

func toolsTrack(sc *scenario) []step {
	nexusCalls := []mcpCall{
		{"nx_context", nil},
		{"nx_plan_status", nil},
		{"nx_plan_start", map[string]any{"topic": "Response cache", "issues": []any{"eviction", "size"}, "research_summary": "GETs repeat."}},
		{"nx_plan_update", map[string]any{"action": "add", "title": "metrics"}},
		{"nx_plan_decide", map[string]any{"issue_id": 1, "decision": "LRU"}},
		{"nx_task_add", map[string]any{"title": "Add the cache", "context": "client GETs", "plan_issue": 1, "acceptance": "hits skip the network"}},
		{"nx_task_list", nil},
		{"nx_task_update", map[string]any{"id": 1, "status": "in_progress"}},
		{"nx_artifact_write", map[string]any{"filename": "report.md", "content": "# Report\n"}},
		{"nx_history_search", map[string]any{"query": "cache"}},
		{"nx_memory_save", map[string]any{"category": "empirical", "topic": "cache hit ratio", "content": "Measure before tuning."}},
		{"nx_memory_gc", nil},
		{"nx_task_update", map[string]any{"id": 1, "status": "completed"}},
		{"nx_task_close", nil},
	}
	return []step{
		mcpStep("mcp: every nexus-core, memory and decision tool", []string{"mcp"}, append(nexusCalls, decisionCalls...), concat(stateMay, storeMay)),
		mcpStep("mcp --only decisions: every decision tool", []string{"mcp", "--only", "decisions"}, decisionCalls, concat(stateMay, storeMay)),
		// Without --store the CLI finds the store through .nauro/config.json.
		{name: "decision list", args: []string{"decision", "list"}, may: storeMay},
		{name: "decision list --store design", args: []string{"decision", "list", "--store", "design"}, may: storeMay},
		{name: "decision check --store design", args: []string{"decision", "check", "--store", "design", "Write the command line in Rust"}, may: storeMay},
		{name: "decision search --store design", args: []string{"decision", "search", "--store", "design", "static binaries"}, may: storeMay},
		{name: "decision show --store design", args: []string{"decision", "show", "--store", "design", "2"}, may: storeMay},
		{name: "memory gc", args: []string{"memory", "gc"}, may: stateMay},
		{name: "memory gc --json", args: []string{"memory", "gc", "--json"}, may: stateMay},
		{name: "memory access", args: []string{"memory", "access"}, may: stateMay},
		{name: "memory save", args: []string{"memory", "save", "--category", "pattern", "--topic", "table driven tests"}, stdin: []byte("Prefer tables.\n"), may: stateMay},
		{name: "tags explain", args: []string{"tags", "explain", "[plan] a `[run]` [d] LRU [rule:testing] r [m] note [zz]"}},
		{name: "state repair", args: []string{"state", "repair"}, may: stateMay},
		{name: "doctor --json", args: []string{"doctor", "--json"}, may: stateMay},
		statusLine(sc),
		{name: "config show", args: []string{"config", "show"}},
		{name: "version", args: []string{"version"}},
		{name: "validate", args: []string{"validate"}},
		{name: "plugin list", args: []string{"plugin", "list"}},
		{name: "core extract vendor/nexus-core", args: []string{"core", "extract", "vendor/nexus-core"}, may: []string{"clone/vendor/nexus-core", "clone/vendor/nexus-core/**"}},
	}
}

// promptTrack sends one prompt of n repetitions of tag (the issue's
// quadratic cases); withPlan opens a plan first, so that [d] has an
// issue to record on.
func promptTrack(sc *scenario, tag string, n int, withPlan bool) []step {
	out := []step{hook(sc, "hook SessionStart", payload(sc, map[string]any{"hook_event_name": "SessionStart", "source": "startup"}))}
	if withPlan {
		out = append(out, mcpStep("mcp nx_plan_start", []string{"mcp", "--without", "decisions"}, []mcpCall{{"nx_plan_start", map[string]any{"topic": "t", "issues": []any{"one"}, "research_summary": "r"}}}, stateMay))
	}
	prompt := strings.Repeat(tag, n)
	return append(out, hook(sc, fmt.Sprintf("hook UserPromptSubmit %q × %d", tag, n), payload(sc, map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": prompt})))
}

// mcpDeepTrack: requests nested deeper than any decoder should follow,
// sent together, and a plugin tool's over-long unknown parameter.
func mcpDeepTrack(sc *scenario) []step {
	const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"0"}}}` + "\n"
	var nested bytes.Buffer
	nested.WriteString(initialize)
	for i := 1; i <= 16; i++ {
		fmt.Fprintf(&nested, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nx_task_list","arguments":{"x":%s}}}`+"\n", i, deep(deepDepth-10))
	}
	fmt.Fprintf(&nested, `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"nx_task_add","arguments":{"title":"t","context":%s}}}`+"\n", deep(deepDepth-10))
	items := bytes.Repeat([]byte("1,"), 1_000_000)
	long := fmt.Sprintf(`{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"check_decision","arguments":{"proposed_approach":"Use Rust","unknown":[%s]}}}`+"\n", items[:len(items)-1])
	all := concat(stateMay, storeMay)
	return []step{
		{name: "mcp: 16 requests nested 9,990 deep, a deep nx_task_add, check_decision with a 1,000,000-item unknown parameter", args: []string{"mcp"}, stdin: append(nested.Bytes(), long...), may: all},
		{name: "mcp --only decisions: check_decision with a 1,000,000-item unknown parameter", args: []string{"mcp", "--only", "decisions"}, stdin: []byte(initialize + long), may: all},
	}
}

// hookHugeTrack: payloads just under the 10 MiB hook limit.
func hookHugeTrack(sc *scenario) []step {
	content := strings.Repeat("x", 9<<20)
	w := hook(sc, "hook PreToolUse architect Write of 9 MiB", preToolUse(sc, architect, "Write", map[string]any{"file_path": filepath.Join(sc.clone, "src", "big.go"), "content": content}))
	w.deny = "claude"
	out := []step{hook(sc, "hook SessionStart", payload(sc, map[string]any{"hook_event_name": "SessionStart", "source": "startup"})), w}
	// The prompts whose tags cost the most to look for: tags alone, and
	// tags among code spans and quotes (regions tags are ignored in).
	for _, unit := range []string{"[d] ", "`x` [d] ", `"q" [m] `} {
		out = append(out, hook(sc, fmt.Sprintf("hook UserPromptSubmit of 9 MiB of %q", unit),
			payload(sc, map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": strings.Repeat(unit, (9<<20)/len(unit))})))
	}
	return out
}
