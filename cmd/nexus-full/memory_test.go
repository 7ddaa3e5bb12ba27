package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMemoryCommands drives `nexus memory` and the memory tools of
// `nexus mcp` through the built binary.
func TestMemoryCommands(t *testing.T) {
	bin := buildNexus(t, t.TempDir())
	home, proj := t.TempDir(), t.TempDir()
	gitCfg := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(gitCfg, []byte("[user]\n\tname = T\n\temail = t@example.invalid\n[commit]\n\tgpgsign = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := isolatedEnv(t, home, "GIT_CONFIG_GLOBAL="+gitCfg, "GIT_CONFIG_NOSYSTEM=1", "GIT_CEILING_DIRECTORIES="+filepath.Dir(proj))
	run := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		return runNexus(t, bin, proj, env, stdin, args...)
	}
	mem := filepath.Join(proj, ".nexus", "memory")

	out, errOut, code := run("Setting busy_timeout to 5000 ms removed SQLITE_BUSY for 8 writers.", "memory", "save", "--category", "empirical", "--topic", "SQLite lock timeouts")
	if code != 0 || !strings.Contains(out, "created empirical-sqlite-lock-timeouts.md") {
		t.Fatalf("save: %d %q %q", code, out, errOut)
	}
	out, _, code = run("busy_timeout also helps SQLITE_BUSY with 16 writers.", "--json", "memory", "save", "--category", "empirical", "--topic", "sqlite busy writers")
	var res map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res["action"] != "extended" || res["file"] != "empirical-sqlite-lock-timeouts.md" {
		t.Fatalf("overlapping save: %d %q", code, out)
	}
	if _, errOut, code = run("x", "memory", "save", "--category", "empirical", "--topic", "release 2026 notes"); code != 2 || !strings.Contains(errOut, "date or version") {
		t.Fatalf("dated topic: %d %q", code, errOut)
	}

	// access records, alone and merged with another harness's log
	stateDir := filepath.Join(proj, ".nexus", "state", "nexus")
	file := filepath.Join(mem, "empirical-sqlite-lock-timeouts.md")
	writeTestFile(t, filepath.Join(stateDir, "memory-access.jsonl"),
		`{"path":"`+file+`","last_accessed_ts":"2026-04-16T08:00:00.000Z","access_count":2,"last_agent":"lead"}`+"\n")
	other := filepath.Join(proj, ".nexus", "state", "other-harness", "memory-access.jsonl")
	writeTestFile(t, other, `{"path":"`+file+`","last_accessed_ts":"2026-04-17T08:00:00.000Z","access_count":3,"last_agent":"other"}`+"\n")
	out, _, code = run("", "memory", "access")
	if code != 0 || !strings.Contains(out, ".nexus/memory/empirical-sqlite-lock-timeouts.md") || !strings.Contains(out, " 2  2026-04-16T08:00:00.000Z  lead") {
		t.Fatalf("access: %d %q", code, out)
	}
	out, _, code = run("", "--json", "memory", "access", "--merge", other)
	var recs []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &recs) != nil || len(recs) != 1 || recs[0]["access_count"] != 5.0 || recs[0]["last_agent"] != "other" {
		t.Fatalf("merged access: %d %q", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(stateDir, "memory-access.jsonl")); !strings.Contains(string(b), `"access_count":2`) {
		t.Fatalf("--merge wrote the log: %s", b)
	}

	// gc: a report, then a refused deletion outside git, then one inside
	out, _, code = run("", "--json", "memory", "gc")
	var rep map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep["files"].([]any)) != 1 {
		t.Fatalf("gc report: %d %q", code, out)
	}
	if _, errOut, code = run("", "memory", "gc", "--delete", "empirical-sqlite-lock-timeouts.md"); code != 1 || !strings.Contains(errOut, "not inside a git repository") {
		t.Fatalf("delete outside git: %d %q", code, errOut)
	}
	gitRun := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = proj, env
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
		return strings.TrimSpace(string(b))
	}
	gitRun("init", "-q")
	writeTestFile(t, filepath.Join(proj, ".nexus", ".gitignore"), "state/\n")
	gitRun("add", "-A")
	gitRun("commit", "-q", "-m", "init")
	out, errOut, code = run("", "memory", "gc", "--delete", ".nexus/memory/empirical-sqlite-lock-timeouts.md")
	if code != 0 || !strings.Contains(out, "restore with: git checkout ") {
		t.Fatalf("delete: %d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatal("file not deleted")
	}
	if st := gitRun("status", "--porcelain"); st != "" {
		t.Fatalf("status after delete: %q", st)
	}

	// MCP: the memory tools are served with the configured prefix.
	batch := rpc(1, "initialize", map[string]any{"protocolVersion": "2024-11-05", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}}) +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		rpc(2, "tools/list", nil) +
		toolCall(3, "nx_memory_save", map[string]any{"category": "pattern", "topic": "release checklist", "content": "tag, build, publish"}) +
		toolCall(4, "nx_memory_gc", map[string]any{})
	out, errOut, code = run(batch, "mcp")
	if code != 0 {
		t.Fatalf("mcp: %d %q", code, errOut)
	}
	for _, want := range []string{`"name":"nx_memory_save"`, `"name":"nx_memory_gc"`, `pattern-release-checklist.md`} {
		if !strings.Contains(out, want) {
			t.Errorf("mcp output lacks %s:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(mem, "pattern-release-checklist.md")); err != nil {
		t.Fatal("nx_memory_save wrote no file")
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
