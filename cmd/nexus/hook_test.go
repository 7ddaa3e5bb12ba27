package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

// hookEnv is a clean environment: no user config, the test distribution.
func hookEnv(t testing.TB, home string, extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"NEXUS_CORE_DIR=" + testenv.CoreDir(t),
	}, extra...)
}

type hookResult struct {
	stdout, stderr string
	code           int
}

func runHook(t testing.TB, bin, dir string, env []string, stdin []byte, args ...string) hookResult {
	t.Helper()
	out, errOut, code := runNexus(t, bin, dir, env, string(stdin), append([]string{"hook"}, args...)...)
	return hookResult{out, errOut, code}
}

func payload(t testing.TB, v map[string]any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHookBinaryFailures feeds the built binary input it cannot use: each
// case prints one line on stderr, logs one line in nexus.log, exits 0, and
// answers nothing — except the gate, which denies a call it cannot read
// whatever gate.policy says. No state file changes.
func TestHookBinaryFailures(t *testing.T) {
	bin := nexusAlone(t)
	home := t.TempDir()
	proj := t.TempDir()
	env := hookEnv(t, home)
	r := runHook(t, bin, proj, env, payload(t, map[string]any{"hook_event_name": "SessionStart", "source": "startup", "cwd": proj}))
	if r.code != 0 || !strings.Contains(r.stdout, "additionalContext") {
		t.Fatalf("session start: %+v", r)
	}
	tracker := filepath.Join(proj, ".nexus", "state", "nexus", "agent-tracker.json")
	before, _ := os.ReadFile(tracker)
	logPath := filepath.Join(proj, ".nexus", "state", "nexus", "nexus.log")

	big := append([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"`), bytes.Repeat([]byte("a"), 10<<20)...)
	big = append(big, `"}}`...)
	cases := []struct {
		name, policy string
		args         []string
		stdin        []byte
		deny         bool
		stderr       string
	}{
		{"invalid json", "fail-open", nil, []byte(`{"hook_event_name":"PostToolUse",`), false, "invalid JSON payload"},
		{"invalid json on the gate, fail-open", "fail-open", nil, []byte(`{"hook_event_name":"PreToolUse",`), true, "invalid JSON payload"},
		{"invalid json, gate fail-closed", "fail-closed", []string{"PreToolUse"}, []byte(`not json`), true, "expected a JSON object"},
		{"invalid json, observing event fail-closed", "fail-closed", []string{"PostToolUse"}, []byte(`not json`), false, "expected a JSON object"},
		{"unknown event", "fail-closed", nil, []byte(`{"hook_event_name":"Notification","message":"hi"}`), false, `unknown Claude Code hook event "Notification"`},
		{"missing field", "fail-open", nil, []byte(`{"hook_event_name":"SubagentStart","agent_type":"architect"}`), false, "field agent_id is required"},
		{"mistyped field, gate fail-closed", "fail-closed", nil, []byte(`{"hook_event_name":"PreToolUse","tool_name":["Edit"]}`), true, "field tool_name must be a string"},
		{"over 10 MiB", "fail-closed", []string{"PreToolUse"}, big, true, "payload over 10 MiB"},
		{"neutral unknown field", "fail-open", []string{"--host", "neutral"}, []byte(`{"event":"session_end","extra":1}`), false, `unknown field "extra"`},
		{"neutral wrong event type", "fail-closed", []string{"--host", "neutral"}, []byte(`{"event":"pre_tool_use","tool":"x","tool_classes":"file_creation"}`), true, "field tool_classes has the wrong type"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runHook(t, bin, proj, hookEnv(t, home, "NEXUS_GATE_POLICY="+tc.policy), tc.stdin, tc.args...)
			if r.code != 0 {
				t.Errorf("exit %d", r.code)
			}
			if strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "nexus hook: ") || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr %q, want one line with %q", r.stderr, tc.stderr)
			}
			if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
				t.Errorf("stack trace: %q", r.stderr)
			}
			if tc.deny != strings.Contains(r.stdout, `"deny"`) || (!tc.deny && r.stdout != "") {
				t.Errorf("stdout %q (deny %v)", r.stdout, tc.deny)
			}
			lines, _ := state.ReadLines(logPath)
			if len(lines) != i+1 || !strings.Contains(string(lines[i]), `"level":"error"`) {
				t.Errorf("nexus.log has %d lines; last %s", len(lines), lines[len(lines)-1])
			}
		})
	}
	if after, _ := os.ReadFile(tracker); !bytes.Equal(before, after) {
		t.Errorf("tracker changed by bad input: %s", after)
	}
	// With a runtime root (NEXUS_RUNTIME_ROOT), the failure is logged in
	// that .nexus folder's nexus.log, as the engine would have logged it.
	root := filepath.Join(t.TempDir(), "runtime")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	r = runHook(t, bin, proj, hookEnv(t, home, "NEXUS_RUNTIME_ROOT="+root), []byte(`not json`), "PostToolUse")
	if lines, _ := state.ReadLines(filepath.Join(root, "state", "nexus", "nexus.log")); r.code != 0 || len(lines) != 1 {
		t.Errorf("runtime root: %+v; its nexus.log has %d lines", r, len(lines))
	}
	if lines, _ := state.ReadLines(logPath); len(lines) != len(cases) {
		t.Errorf("the project's nexus.log has %d lines, want %d", len(lines), len(cases))
	}
	// Nothing configured: the built-in distribution serves the hook.
	bare := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home}
	r = runHook(t, bin, proj, bare, payload(t, map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Read", "cwd": proj}))
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("built-in distribution: %+v", r)
	}
	// A configured distribution that is not usable: the failure is
	// reported in one line, the host proceeds.
	r = runHook(t, bin, proj, append(bare, "NEXUS_CORE_DIR="+filepath.Join(home, "nowhere")), payload(t, map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Read", "cwd": proj}))
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "NEXUS_CORE_DIR is not usable") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("unusable distribution: %+v", r)
	}
}

// TestHookBinaryConcurrent runs 8 agents' spawn / tool calls / completion
// as separate nexus processes at once: nothing may be lost.
func TestHookBinaryConcurrent(t *testing.T) {
	bin := nexusAlone(t)
	home := t.TempDir()
	proj := t.TempDir()
	env := hookEnv(t, home)
	if r := runHook(t, bin, proj, env, payload(t, map[string]any{"hook_event_name": "SessionStart", "cwd": proj})); r.code != 0 || r.stderr != "" {
		t.Fatalf("session start %+v", r)
	}
	// Edits need a planned cycle.
	if err := os.WriteFile(filepath.Join(proj, ".nexus", "state", "tasks.json"), []byte(`{"goal":"g","decisions":[],"tasks":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const agents, calls = 8, 6
	roles := []string{"engineer", "writer"}
	var wg sync.WaitGroup
	errs := make(chan string, agents*(calls+2))
	for a := 0; a < agents; a++ {
		wg.Add(1)
		go func(a int) {
			defer wg.Done()
			id := fmt.Sprintf("agent-%d", a)
			typ := "nexus:" + roles[a%2]
			fire := func(p map[string]any) {
				p["cwd"], p["agent_id"], p["agent_type"] = proj, id, typ
				if r := runHook(t, bin, proj, env, payload(t, p)); r.code != 0 || r.stderr != "" {
					errs <- fmt.Sprintf("%s %v: %+v", id, p["hook_event_name"], r)
				}
			}
			fire(map[string]any{"hook_event_name": "SubagentStart"})
			for c := 0; c < calls; c++ {
				file := filepath.Join(proj, "src", id, fmt.Sprintf("f%d.go", c))
				fire(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": map[string]any{"file_path": file, "content": "x"}, "tool_response": map[string]any{"type": "create"}})
			}
			fire(map[string]any{"hook_event_name": "SubagentStop", "last_assistant_message": "done " + id})
		}(a)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	raw, err := os.ReadFile(filepath.Join(proj, ".nexus", "state", "nexus", "agent-tracker.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	_ = json.Unmarshal(raw, &doc)
	if ps, err := schema.NewCoreSet(testenv.CoreDir(t)).Validate(schema.StateTracker, doc); err != nil || len(ps) > 0 {
		t.Errorf("tracker invalid: %v %v", err, ps)
	}
	var entries []state.TrackerEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != agents {
		t.Fatalf("%d tracker entries, want %d", len(entries), agents)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.AgentID] = true
		if e.Status != state.AgentCompleted || e.LastMessage == nil || *e.LastMessage != "done "+e.AgentID {
			t.Errorf("entry %+v", e)
		}
		var want []string
		for c := 0; c < calls; c++ {
			want = append(want, fmt.Sprintf("src/%s/f%d.go", e.AgentID, c))
		}
		got := append([]string(nil), e.FilesTouched...)
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s files_touched %v", e.AgentID, e.FilesTouched)
		}
	}
	if len(seen) != agents {
		t.Errorf("agents %v", seen)
	}
	lines, err := state.ReadLines(filepath.Join(proj, ".nexus", "state", "nexus", "tool-log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != agents*calls {
		t.Errorf("%d tool-log lines, want %d", len(lines), agents*calls)
	}
	perAgent := map[string]int{}
	for _, l := range lines {
		var tl struct {
			AgentID string `json:"agent_id"`
		}
		if err := json.Unmarshal(l, &tl); err != nil {
			t.Fatalf("tool log line %q: %v", l, err)
		}
		perAgent[tl.AgentID]++
	}
	for a := 0; a < agents; a++ {
		if n := perAgent[fmt.Sprintf("agent-%d", a)]; n != calls {
			t.Errorf("agent-%d has %d tool-log lines", a, n)
		}
	}
}

// TestHookBinaryMemoryRead checks the real memory package is wired: a Read
// of a memory file lands in memory-access.jsonl, valid against its schema.
func TestHookBinaryMemoryRead(t *testing.T) {
	bin := nexusAlone(t)
	home := t.TempDir()
	proj := t.TempDir()
	env := hookEnv(t, home)
	mem := filepath.Join(proj, ".nexus", "memory", "pattern-retries.md")
	if err := os.MkdirAll(filepath.Dir(mem), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mem, []byte("# retries\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		r := runHook(t, bin, proj, env, payload(t, map[string]any{"hook_event_name": "PostToolUse", "cwd": proj, "agent_id": "r1", "agent_type": "researcher", "tool_name": "Read", "tool_input": map[string]any{"file_path": mem}, "tool_response": map[string]any{"type": "text"}}))
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("%+v", r)
		}
	}
	recs, err := state.ReadMemoryAccess(filepath.Join(proj, ".nexus", "state", "nexus", "memory-access.jsonl"))
	if err != nil || len(recs) != 1 {
		t.Fatalf("records %+v %v", recs, err)
	}
	if recs[0].AccessCount != 2 || recs[0].LastAgent != "r1" || recs[0].Path != mem {
		t.Errorf("record %+v", recs[0])
	}
	sch := schema.NewCoreSet(testenv.CoreDir(t))
	lines, _ := state.ReadLines(filepath.Join(proj, ".nexus", "state", "nexus", "memory-access.jsonl"))
	for _, l := range lines {
		var v any
		_ = json.Unmarshal(l, &v)
		if ps, err := sch.Validate(schema.StateMemory, v); err != nil || len(ps) > 0 {
			t.Errorf("line %s: %v %v", l, err, ps)
		}
	}
}

// TestInstallBinary runs `nexus install claude` twice and uninstalls.
func TestInstallBinary(t *testing.T) {
	bin := nexusAlone(t)
	home := t.TempDir()
	proj := t.TempDir()
	env := hookEnv(t, home)
	run := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = proj, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := run("--project", proj, "install", "claude", "--dry-run")
	if !strings.Contains(out, "dry run") || !strings.Contains(out, "+    \"SessionStart\": [") {
		t.Errorf("dry run output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(proj, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Fatal("dry run wrote settings")
	}
	run("--project", proj, "install", "claude")
	out = run("--project", proj, "install", "claude")
	if strings.Count(out, "already up to date") != 2 || !strings.Contains(out, "14 file(s) nexus wrote here are up to date") || strings.Contains(out, ": written") {
		t.Errorf("second install:\n%s", out)
	}
	// The distribution came from NEXUS_CORE_DIR, which Claude Code may not
	// have: the commands name it.
	settings, _ := os.ReadFile(filepath.Join(proj, ".claude", "settings.json"))
	if !strings.Contains(string(settings), bin+" hook --host claude --managed --core "+testenv.CoreDir(t)+" PreToolUse") {
		t.Errorf("settings:\n%s", settings)
	}
	for _, f := range []string{".claude/agents/architect.md", ".claude/skills/nx-plan/SKILL.md", ".claude/skills/nx-setup/SKILL.md", ".claude/nexus-install.json"} {
		if _, err := os.Stat(filepath.Join(proj, f)); err != nil {
			t.Errorf("install did not write %s: %v", f, err)
		}
	}
	// The decision store (on by default) is its own server, "nauro".
	var mcpFile struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	raw, _ := os.ReadFile(filepath.Join(proj, ".mcp.json"))
	if err := json.Unmarshal(raw, &mcpFile); err != nil {
		t.Fatal(err)
	}
	if n, x := mcpFile.MCPServers["nauro"], mcpFile.MCPServers["nexus"]; n.Command != bin || !strings.HasPrefix(strings.Join(n.Args, " "), "mcp --only decisions") ||
		x.Command != bin || !strings.HasPrefix(strings.Join(x.Args, " "), "mcp --without decisions") {
		t.Errorf(".mcp.json:\n%s", raw)
	}
	run("--project", proj, "uninstall", "claude")
	for _, f := range []string{".claude/settings.json", ".mcp.json", ".claude/agents", ".claude/skills", ".claude/nexus-install.json"} {
		if _, err := os.Stat(filepath.Join(proj, f)); !os.IsNotExist(err) {
			t.Errorf("%s left after uninstall", f)
		}
	}
}

// TestInstallPluginBinary writes the Claude Code plugin package and
// removes it again.
func TestInstallPluginBinary(t *testing.T) {
	bin := nexusAlone(t)
	home := t.TempDir()
	proj := t.TempDir()
	plugin := filepath.Join(t.TempDir(), "nexus-plugin")
	env := hookEnv(t, home)
	run := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = proj, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := run("install", "claude", "--plugin", plugin)
	if !strings.Contains(out, "claude plugin marketplace add "+plugin) {
		t.Errorf("install output:\n%s", out)
	}
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(plugin, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if s := read("skills/nx-plan/SKILL.md"); !strings.Contains(s, `subagent_type "nexus:researcher"`) {
		t.Error("plugin skills must spawn the plugin's agents (nexus:<id>)")
	}
	if s := read("agents/architect.md"); !strings.Contains(s, "mcp__plugin_nexus_nexus__nx_task_add") || strings.Contains(s, "mcp__nexus__") {
		t.Error("plugin agents must name the plugin's MCP tools")
	}
	if s := read("hooks/hooks.json"); !strings.Contains(s, bin+" hook --host claude --managed") {
		t.Errorf("hooks.json does not run this nexus:\n%s", s)
	}
	if _, err := exec.Command(bin, "install", "claude", "--plugin", plugin, "--scope", "user").CombinedOutput(); err == nil {
		t.Error("--plugin with --scope was accepted")
	}
	run("uninstall", "claude", "--plugin", plugin)
	if ents, _ := os.ReadDir(plugin); len(ents) != 0 {
		t.Errorf("left in the plugin folder: %v", ents)
	}
}

// TestInstallRecordsCoreOnlyWhenNeeded: --core goes into the registered
// commands only when Claude Code's environment could not find the
// distribution otherwise.
func TestInstallRecordsCoreOnlyWhenNeeded(t *testing.T) {
	bin := nexusAlone(t)
	core := testenv.CoreDir(t)
	for _, c := range []struct {
		name   string
		env    func(home string) []string
		record bool
	}{
		{"built-in", func(home string) []string { return []string{"HOME=" + home} }, false},
		{"NEXUS_CORE_DIR", func(home string) []string { return []string{"HOME=" + home, "NEXUS_CORE_DIR=" + core} }, true},
		{"user config in ~/.config", func(home string) []string {
			writeDoctorFile(t, filepath.Join(home, ".config", "nexus", "config.yaml"), "core:\n  dir: "+core+"\n")
			return []string{"HOME=" + home}
		}, false},
		{"user config through XDG_CONFIG_HOME", func(home string) []string {
			x := filepath.Join(home, "elsewhere")
			writeDoctorFile(t, filepath.Join(x, "nexus", "config.yaml"), "core:\n  dir: "+core+"\n")
			return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + x}
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			home, proj := t.TempDir(), t.TempDir()
			cmd := exec.Command(bin, "--project", proj, "install", "claude")
			cmd.Dir, cmd.Env = proj, append(c.env(home), "PATH="+os.Getenv("PATH"))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			b, _ := os.ReadFile(filepath.Join(proj, ".claude", "settings.json"))
			if got := strings.Contains(string(b), "--core "+core); got != c.record {
				t.Errorf("--core recorded: %v, want %v\n%s", got, c.record, b)
			}
		})
	}
}

// TestStatusLineBinary: `nexus statusline` finds the project from Claude
// Code's JSON and prints one line, also where nexus is not set up.
func TestStatusLineBinary(t *testing.T) {
	bin := nexusAlone(t)
	proj := t.TempDir()
	run := func(stdin string) string {
		cmd := exec.Command(bin, "statusline")
		cmd.Dir, cmd.Env = t.TempDir(), hookEnv(t, t.TempDir())
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return string(out)
	}
	in := `{"session_id":"s","cwd":"` + proj + `","workspace":{"current_dir":"` + proj + `","project_dir":"` + proj + `"},"model":{"display_name":"Opus"}}`
	if got := run(in); got != "nexus: not set up here (run /nx-setup)\n" {
		t.Errorf("no .nexus: %q", got)
	}
	writeDoctorFile(t, filepath.Join(proj, ".nexus", "state", "tasks.json"), `{"goal":"g","decisions":[],"tasks":[{"id":1,"title":"t","context":"c","status":"completed","deps":[],"created_at":"2026-04-16T08:00:00.000Z"}]}`)
	if got := run(in); got != "nexus · tasks 1/1 done\n" {
		t.Errorf("with tasks: %q", got)
	}
	if got := run("not json"); !strings.HasPrefix(got, "nexus: status-line input is not JSON") {
		t.Errorf("bad input: %q", got)
	}
}

// TestHookGateFailsClosed (issue 22.6): a PreToolUse / pre_tool_use nexus
// cannot read is denied with the problem in the reason, for both hosts and
// under both gate.policy values; one it can read is judged as usual, up to
// the depth limit included.
func TestHookGateFailsClosed(t *testing.T) {
	bin := nexusAlone(t)
	home, proj := t.TempDir(), t.TempDir()
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	type tc struct {
		name    string
		args    []string // after --host
		payload string
		want    string // "allow", "capability" (judged, denied), or a word of the unreadable reason
	}
	// Claude Code: the payload object and tool_input take two levels.
	claudeCall := func(agent, tool, input string) string {
		a := ""
		if agent != "" {
			a = `"agent_id":"a1","agent_type":"` + agent + `",`
		}
		return `{"hook_event_name":"PreToolUse","session_id":"s",` + a + `"cwd":"` + proj + `","tool_name":"` + tool + `","tool_input":` + input + `}`
	}
	neutralCall := func(agent, classes, input string) string {
		a := ""
		if agent != "" {
			a = `"agent_id":"a1","agent_type":"` + agent + `",`
		}
		return `{"event":"pre_tool_use","session_id":"s",` + a + `"cwd":"` + proj + `","tool":"edit","tool_classes":` + classes + `,"tool_input":` + input + `}`
	}
	big := claudeCall("", "Bash", `{"command":"`+strings.Repeat("a", 10<<20)+`"}`)
	cases := []tc{
		{"claude: judged, allowed, at the depth limit", []string{"claude", "PreToolUse"}, claudeCall("", "Read", `{"file_path":"x","extra":`+nest(62)+`}`), "allow"},
		{"claude: judged, denied, at the depth limit", []string{"claude", "PreToolUse"}, claudeCall("architect", "Write", `{"file_path":"x","content":"c","extra":`+nest(62)+`}`), "capability"},
		{"claude: one level over the limit", []string{"claude", "PreToolUse"}, claudeCall("", "Read", `{"file_path":"x","extra":`+nest(63)+`}`), "limit of 64 levels"},
		{"claude: the issue's 9,999 levels, event from the payload", []string{"claude"}, claudeCall("architect", "Write", `{"file_path":"x","content":"c","extra":`+nest(9999)+`}`), "limit of 64 levels"},
		{"claude: 1e309 in tool_input", []string{"claude", "PreToolUse"}, claudeCall("", "Read", `{"file_path":"x","n":1e309}`), "64-bit float"},
		{"claude: tool_input not an object", []string{"claude", "PreToolUse"}, claudeCall("", "Read", `"{\"file_path\":"`), "must be a JSON object"},
		{"claude: invalid JSON, event from the payload", []string{"claude"}, `{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":}`, "invalid JSON"},
		{"claude: tool_name of the wrong type", []string{"claude", "PreToolUse"}, `{"hook_event_name":"PreToolUse","tool_name":5}`, "must be a string"},
		{"claude: agent_type of the wrong type", []string{"claude", "PreToolUse"}, `{"hook_event_name":"PreToolUse","tool_name":"Read","agent_type":7}`, "must be a string"},
		{"claude: tool_name missing", []string{"claude", "PreToolUse"}, `{"hook_event_name":"PreToolUse"}`, "tool_name is required"},
		{"claude: over 10 MiB", []string{"claude", "PreToolUse"}, big, "payload over 10 MiB"},
		{"neutral: judged, allowed, at the depth limit", []string{"neutral", "pre_tool_use"}, neutralCall("", `[]`, `{"path":"x","extra":`+nest(62)+`}`), "allow"},
		{"neutral: judged, denied, at the depth limit", []string{"neutral", "pre_tool_use"}, neutralCall("architect", `["file_modification"]`, `{"path":"x","extra":`+nest(62)+`}`), "capability"},
		{"neutral: one level over the limit, event from the payload", []string{"neutral"}, neutralCall("", `[]`, `{"path":"x","extra":`+nest(63)+`}`), "limit of 64 levels"},
		{"neutral: 1e309 in tool_input", []string{"neutral", "pre_tool_use"}, neutralCall("", `[]`, `{"n":-1e309}`), "64-bit float"},
		{"neutral: tool_input not an object", []string{"neutral", "pre_tool_use"}, neutralCall("", `[]`, `[1]`), "wrong type"},
		{"neutral: invalid JSON", []string{"neutral"}, `{"event":"pre_tool_use","tool":"edit","tool_input":{"path":]}`, "invalid"},
		{"neutral: tool of the wrong type", []string{"neutral", "pre_tool_use"}, `{"event":"pre_tool_use","tool":5}`, "wrong type"},
		{"neutral: tool missing", []string{"neutral", "pre_tool_use"}, `{"event":"pre_tool_use"}`, "field tool is required"},
	}
	for _, policy := range []string{"fail-open", "fail-closed"} {
		for _, c := range cases {
			t.Run(policy+"/"+c.name, func(t *testing.T) {
				args := append([]string{"--host"}, c.args...)
				r := runHook(t, bin, proj, hookEnv(t, home, "NEXUS_GATE_POLICY="+policy), []byte(c.payload), args...)
				if r.code != 0 {
					t.Fatalf("exit %d", r.code)
				}
				switch c.want {
				case "allow": // nothing to say: no reply (claude), {} (neutral)
					if (r.stdout != "" && r.stdout != "{}\n") || r.stderr != "" {
						t.Fatalf("a call nexus can read was not judged as usual: %+v", r)
					}
					return
				case "capability":
					if !strings.Contains(r.stdout, `"deny"`) || !strings.Contains(r.stdout, "capability no_file_edit") {
						t.Fatalf("stdout %q, want the gate's own denial", r.stdout)
					}
					return
				}
				if !strings.Contains(r.stdout, `"deny"`) || !strings.Contains(r.stdout, "could not read the call") || !strings.Contains(r.stdout, c.want) {
					t.Fatalf("stdout %q, want a denial naming %q", r.stdout, c.want)
				}
				if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
					t.Fatalf("stderr %q", r.stderr)
				}
			})
		}
	}
}
