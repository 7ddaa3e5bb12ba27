package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// exitCase is how one command is run for the exit-status table: its
// arguments after the command path, its stdin, and the exit status it
// must give with a configuration file that cannot be parsed.
type exitCase struct {
	args   []string
	stdin  string
	broken int    // exit status with .nexus/nexus.yaml unparseable
	says   string // in its output then ("" = the file's name)
	serves bool   // a server that runs until stopped when the configuration loads
}

// exitTable lists every command of nexus. TestExitStatus fails for a
// command that has no row, so a new command gets one.
var exitTable = map[string]exitCase{
	"version":               {broken: exitConfig},
	"hook":                  {args: []string{"SessionStart"}, stdin: `{"session_id":"s","source":"startup"}`, broken: exitOK, says: "invalid YAML"},
	"statusline":            {stdin: "{}", broken: exitOK, says: "config: 1 problem"},
	"mcp":                   {broken: exitOK}, // serves until the end of stdin
	"mcp token":             {broken: exitConfig},
	"install claude":        {broken: exitConfig},
	"uninstall claude":      {broken: exitOK, says: "uninstall goes on"},
	"install codex":         {broken: exitConfig},
	"uninstall codex":       {broken: exitOK, says: "uninstall goes on"},
	"install opencode":      {broken: exitConfig},
	"uninstall opencode":    {broken: exitOK, says: "uninstall goes on"},
	"doctor":                {broken: exitConfig},
	"validate":              {broken: exitConfig},
	"conformance":           {broken: exitConfig},
	"tags explain":          {args: []string{"[m] x"}, broken: exitConfig},
	"memory access":         {broken: exitConfig},
	"memory save":           {args: []string{"--category", "empirical", "--topic", "wal readers"}, stdin: "x", broken: exitConfig},
	"memory gc":             {broken: exitConfig},
	"decision":              {args: []string{"list"}, broken: exitConfig},
	"state repair":          {broken: exitConfig},
	"plugin list":           {broken: exitConfig},
	"plugin inspect":        {args: []string{"decisions"}, broken: exitConfig},
	"plugin verify":         {broken: exitConfig},
	"core extract":          {args: []string{"OUT"}, broken: exitOK, says: "-"}, // the configuration is not read
	"config show":           {broken: exitConfig},
	"config keys":           {broken: exitOK, says: "-"},
	"view":                  {broken: exitConfig, serves: true},
	"completion bash":       {broken: exitOK, says: "-"},
	"completion zsh":        {broken: exitOK, says: "-"},
	"completion fish":       {broken: exitOK, says: "-"},
	"completion powershell": {broken: exitOK, says: "-"},
	"help":                  {broken: exitOK, says: "-"},
}

// runExit runs nexus with a time limit (a server that did not stop is a
// failure) and returns its output and exit status.
func runExit(t *testing.T, bin, dir string, env []string, stdin string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("nexus %s did not end: %s", strings.Join(args, " "), out.String())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}

// TestExitStatus (issue 26): one rule for every command of nexus, table
// driven over the command tree: a flag nexus does not know is a usage
// error (2); a configuration file that cannot be parsed is 3 for every
// command that reads the configuration, naming the file, while the doors
// a host runs (hook, statusline, mcp) and uninstall go on without it and
// say so, and the commands that read no configuration run (0); a warning
// (a key nexus does not know) changes no exit status. README's exit table
// and `nexus --help` document it.
func TestExitStatus(t *testing.T) {
	dir := t.TempDir()
	bin := buildNexus(t, dir)
	home := t.TempDir()
	env := hookEnv(t, home, "NAURO_HOME="+filepath.Join(home, "nauro"))
	seen := map[string]bool{}
	tree := commandTree()
	for _, p := range commandPaths(tree, nil) {
		if len(p) == 0 {
			continue
		}
		name := strings.Join(p, " ")
		c, ok := exitTable[name]
		if !ok {
			if cmd, _, _ := tree.Find(p); cmd != nil && cmd.HasSubCommands() {
				continue // a group: its subcommands have rows
			}
			t.Errorf("nexus %s has no row in exitTable", name)
			continue
		}
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			proj := t.TempDir()
			if out, err := exec.Command("git", "-C", proj, "init", "-q").CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			argsFor := func() []string {
				args := append(append([]string(nil), p...), c.args...)
				for i, a := range args {
					if a == "OUT" {
						args[i] = filepath.Join(t.TempDir(), "out")
					}
				}
				return args
			}
			// A flag nexus does not know: a usage error.
			if out, code := runExit(t, bin, proj, env, c.stdin, append(append([]string(nil), p...), "--frob")...); code != exitUsage {
				t.Errorf("--frob: exit %d, want %d\n%s", code, exitUsage, out)
			}
			// A warning changes nothing: an unknown key.
			writeTestFile(t, filepath.Join(proj, ".nexus", "nexus.yaml"), "gate:\n  polcy: fail-closed\n")
			okOut, okCode := "", exitOK
			if !c.serves {
				okOut, okCode = runExit(t, bin, proj, env, c.stdin, argsFor()...)
			}
			// A file that cannot be parsed.
			writeTestFile(t, filepath.Join(proj, ".nexus", "nexus.yaml"), "gate: [\n")
			out, code := runExit(t, bin, proj, env, c.stdin, argsFor()...)
			if code != c.broken {
				t.Errorf("broken configuration: exit %d, want %d\n%s", code, c.broken, out)
			}
			switch says := c.says; says {
			case "-":
			case "":
				if !strings.Contains(out, "nexus.yaml") || !strings.Contains(out, "invalid YAML") {
					t.Errorf("broken configuration: the file and the problem are not named:\n%s", out)
				}
			default:
				if !strings.Contains(out, says) {
					t.Errorf("broken configuration: output does not say %q:\n%s", says, out)
				}
			}
			if c.broken == exitConfig && (okCode == exitConfig || okCode == exitUsage) {
				t.Errorf("a configuration warning: exit %d\n%s", okCode, okOut)
			}
		})
	}
	for name := range exitTable {
		if !seen[name] {
			t.Errorf("exitTable has a row for %q, which is not a command", name)
		}
	}
}

// TestExitStatusRule: the same rule for calls that are wrong in other ways
// (2) and for commands that fail (1), in nexus and in the commands it
// hands on (nexus decision runs in nexus-plugins).
func TestExitStatusRule(t *testing.T) {
	bin := buildNexus(t, t.TempDir())
	home := t.TempDir()
	env := hookEnv(t, home, "NAURO_HOME="+filepath.Join(home, "nauro"))
	proj := t.TempDir()
	if out, err := exec.Command("git", "-C", proj, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if out, code := runExit(t, bin, proj, env, "", "decision", "init"); code != 0 {
		t.Fatalf("decision init: %d %s", code, out)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"install", "claude", "--scope", "global"}, exitUsage},
		{[]string{"decision", "propose", "--title", "T", "--rationale", "a rationale long enough", "--type", "foo"}, exitUsage},
		{[]string{"decision", "frob"}, exitUsage},
		{[]string{"tags", "explain"}, exitUsage},
		{[]string{"memory", "save", "--category", "nope", "--topic", "a b"}, exitUsage},
		{[]string{"plugin", "frob"}, exitUsage},
		{[]string{"validate", "extra"}, exitUsage},
		{[]string{"validate", "--core", filepath.Join(proj, "nothing-here")}, exitUsage},
		{[]string{"memory", "gc", "--delete", "nope.md"}, exitFailure},
		{[]string{"decision", "show", "404"}, exitFailure},
		{[]string{"plugin", "inspect", "nope"}, exitFailure},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if out, code := runExit(t, bin, proj, env, "", tc.args...); code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, out)
			}
		})
	}
}

// mcpBatch pipes requests into `nexus mcp` and returns its answers by id.
func mcpBatch(t *testing.T, bin, dir string, env []string, requests string) map[float64]map[string]any {
	t.Helper()
	init := rpc(0, "initialize", map[string]any{"protocolVersion": "2024-11-05", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}}) +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	out, code := runExit(t, bin, dir, env, init+requests, "mcp")
	if code != 0 {
		t.Fatalf("nexus mcp: exit %d\n%s", code, out)
	}
	answers := map[float64]map[string]any{}
	for _, line := range strings.Split(out, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			if id, ok := m["id"].(float64); ok {
				answers[id] = m
			}
		}
	}
	return answers
}

// TestEveryToolRefusesUnknownParameters (issue 26, item 11): one rule for
// every tool nexus serves, its own and the plugins' (the decision store's
// check_decision included): a parameter the tool does not take is refused
// by name, listing the ones it does take.
func TestEveryToolRefusesUnknownParameters(t *testing.T) {
	bin := buildNexus(t, t.TempDir())
	home := t.TempDir()
	env := hookEnv(t, home, "NAURO_HOME="+filepath.Join(home, "nauro"))
	proj := t.TempDir()
	list := mcpBatch(t, bin, proj, env, rpc(1, "tools/list", nil))
	tools, _ := list[1]["result"].(map[string]any)["tools"].([]any)
	if len(tools) < 20 {
		t.Fatalf("tools/list: %v", list[1])
	}
	var calls strings.Builder
	names := map[float64]string{}
	for i, tool := range tools {
		name := tool.(map[string]any)["name"].(string)
		names[float64(i+2)] = name
		calls.WriteString(toolCall(i+2, name, map[string]any{"zz_not_a_parameter": 1}))
	}
	answers := mcpBatch(t, bin, proj, env, calls.String())
	for id, name := range names {
		b, _ := json.Marshal(answers[id])
		text := string(b)
		if !strings.Contains(text, `unknown parameter \"zz_not_a_parameter\" (this tool takes:`) || !strings.Contains(text, `"isError":true`) {
			t.Errorf("%s accepts an unknown parameter: %s", name, text)
		}
	}
	if !slicesContains(names, "check_decision") {
		t.Errorf("the decision store's tools were not served: %v", names)
	}
}

func slicesContains(m map[float64]string, v string) bool {
	for _, s := range m {
		if s == v {
			return true
		}
	}
	return false
}
