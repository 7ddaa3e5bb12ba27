package main

import (
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// gitStatus lists what `git status` shows in dir, every untracked file
// named.
func gitStatus(t *testing.T, dir string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=all").CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v %s", err, out)
	}
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			files = append(files, strings.TrimSpace(l[2:]))
		}
	}
	sort.Strings(files)
	return files
}

// TestCommandsLeaveACleanGitStatus (issue 26): each command, run in a
// fresh git repository before any session, leaves in `git status` only
// the files meant to be committed: .nexus/.gitignore before anything else
// under .nexus/ (so state files, locks and logs stay ignored), the
// memory and rules files a save writes, the decision store's pointer
// with its .gitignore (not its lock), what install writes for the host;
// and uninstall after install leaves nothing.
func TestCommandsLeaveACleanGitStatus(t *testing.T) {
	bin := buildNexus(t, t.TempDir())
	home := t.TempDir()
	env := hookEnv(t, home, "NAURO_HOME="+filepath.Join(home, "nauro"))
	session := `{"hook_event_name":"SessionStart","session_id":"s1","source":"startup"}`
	prompt := func(p string) string {
		return `{"hook_event_name":"UserPromptSubmit","session_id":"s1","prompt":"` + p + `"}`
	}
	write := `{"hook_event_name":"PreToolUse","session_id":"s1","tool_name":"Write","tool_input":{"file_path":"x.txt","content":"x"}}`
	installed := []string{".claude/agents/", ".claude/nexus-install.json", ".claude/settings.json", ".claude/skills/", ".mcp.json"}
	type step struct {
		args  []string
		stdin string
	}
	for _, tc := range []struct {
		name  string
		steps []step
		want  []string // prefixes of the files git shows, in order
	}{
		{"version", []step{{args: []string{"version"}}}, nil},
		{"doctor", []step{{args: []string{"doctor"}}}, nil},
		{"doctor --fix", []step{{args: []string{"doctor", "--fix"}}}, nil},
		{"validate", []step{{args: []string{"validate"}}}, nil},
		{"config show", []step{{args: []string{"config", "show"}}}, nil},
		{"tags explain", []step{{args: []string{"tags", "explain", "[m] empirical: sqlite WAL readers need the shm file"}}}, nil},
		{"memory save", []step{{args: []string{"memory", "save", "--category", "empirical", "--topic", "wal readers"}, stdin: "sqlite WAL readers need the shm file"}},
			[]string{".nexus/.gitignore", ".nexus/memory/empirical-wal-readers.md"}},
		{"memory access", []step{{args: []string{"memory", "access"}}}, nil},
		{"memory gc", []step{{args: []string{"memory", "gc"}}}, nil},
		{"state repair", []step{{args: []string{"state", "repair"}}}, nil},
		{"plugin list", []step{{args: []string{"plugin", "list"}}}, nil},
		{"plugin verify", []step{{args: []string{"plugin", "verify"}}}, nil},
		{"statusline", []step{{args: []string{"statusline"}, stdin: "{}"}}, nil},
		{"decision init and propose", []step{{args: []string{"decision", "init"}},
			{args: []string{"decision", "propose", "--title", "Use SQLite", "--rationale", "One file, no server, enough for one user."}}},
			[]string{".nauro/.gitignore", ".nauro/config.json"}},
		{"hook session", []step{{args: []string{"hook"}, stdin: session}, {args: []string{"hook"}, stdin: write}}, []string{".nexus/.gitignore"}},
		{"hook [m] before a session", []step{{args: []string{"hook"}, stdin: prompt("[m] empirical: sqlite WAL readers need the shm file")}},
			[]string{".nexus/.gitignore", ".nexus/memory/empirical-"}},
		{"hook [rule]", []step{{args: []string{"hook"}, stdin: prompt("[rule:testing] run go test -race")}}, []string{".nexus/.gitignore", ".nexus/rules/testing.md"}},
		{"mcp", []step{{args: []string{"mcp"}, stdin: rpc(1, "initialize", map[string]any{"protocolVersion": "2024-11-05", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}}) +
			toolCall(2, "nx_plan_start", map[string]any{"topic": "t", "issues": []any{"a"}, "research_summary": "r"})}}, []string{".nexus/.gitignore"}},
		{"install", []step{{args: []string{"install", "claude"}}}, installed},
		{"install, statusline, uninstall", []step{{args: []string{"install", "claude"}}, {args: []string{"install", "claude", "--statusline"}}, {args: []string{"uninstall", "claude"}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj := t.TempDir()
			if out, err := exec.Command("git", "-C", proj, "init", "-q").CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			for _, s := range tc.steps {
				if out, code := runExit(t, bin, proj, env, s.stdin, s.args...); code != 0 {
					t.Fatalf("nexus %s: exit %d\n%s", strings.Join(s.args, " "), code, out)
				}
			}
			got := gitStatus(t, proj)
			var unexpected []string
			matched := map[string]bool{}
			for _, f := range got {
				ok := false
				for _, w := range tc.want {
					if strings.HasPrefix(f, w) {
						ok, matched[w] = true, true
					}
				}
				if !ok {
					unexpected = append(unexpected, f)
				}
			}
			if len(unexpected) > 0 {
				t.Errorf("git status shows files not meant to be committed: %v\n(all: %v)", unexpected, got)
			}
			for _, w := range tc.want {
				if !matched[w] {
					t.Errorf("git status lacks %s*: %v", w, got)
				}
			}
		})
	}
}
