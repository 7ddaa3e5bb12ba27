package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sft "github.com/nexus-harness/nexus/internal/safefile/safefiletest"
	"github.com/nexus-harness/nexus/internal/testenv"
)

// Issue 22 item 2 at the commands: a project whose state files are
// symlinks to /dev/zero, FIFOs or sparse giants makes no command hang or
// grow. Each run is bounded in time (a hang fails the test, it does not
// hang the suite) and in peak RSS (getrusage of the child), and its output
// names the file it refused.
func TestCommandsRefuseHostileStateFiles(t *testing.T) {
	bin := nexusAlone(t)
	for _, k := range []sft.Kind{sft.RelDevZero, sft.DevZero, sft.FIFO, sft.Sparse} {
		t.Run(string(k), func(t *testing.T) {
			proj := t.TempDir()
			os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
			os.WriteFile(filepath.Join(proj, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
			os.MkdirAll(filepath.Join(proj, ".nexus", "memory"), 0o755)
			os.WriteFile(filepath.Join(proj, ".nexus", "memory", "empirical-x.md"), []byte("# x\n"), 0o644)
			sft.Plant(t, filepath.Join(proj, ".nexus", "memory", "empirical-y.md"), k, 0, 0)
			for _, f := range []string{".nexus/state/tasks.json", ".nexus/state/plan.json", ".nexus/.gitignore",
				".nexus/state/nexus/agent-tracker.json", ".nexus/state/nexus/memory-access.jsonl", ".nexus/history.json",
				".claude/settings.json", ".claude/agents/architect.md"} {
				sft.Plant(t, filepath.Join(proj, filepath.FromSlash(f)), k, 0, 0)
			}
			env := hookEnv(t, t.TempDir())
			mcpIn := rpc(1, "initialize", map[string]any{"protocolVersion": "2024-11-05", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}}) +
				toolCall(2, "nx_task_list", nil) + toolCall(3, "nx_context", nil) + toolCall(4, "nx_history_search", map[string]any{"query": "x"})
			for _, c := range []struct {
				name  string
				args  []string
				stdin string
				// names: the output must name one of these files.
				names []string
			}{
				{"SessionStart", []string{"hook", "--host", "claude"}, `{"hook_event_name":"SessionStart","source":"startup","cwd":"` + proj + `"}`, []string{".gitignore", "tasks.json", "plan.json"}},
				{"UserPromptSubmit", []string{"hook", "--host", "claude"}, `{"hook_event_name":"UserPromptSubmit","prompt":"[run] go","session_id":"s","cwd":"` + proj + `"}`, []string{"tasks.json", "plan.json"}},
				{"PreToolUse", []string{"hook", "--host", "claude"}, `{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"x"},"session_id":"s","cwd":"` + proj + `"}`, nil},
				{"statusline", []string{"statusline"}, `{"workspace":{"project_dir":"` + proj + `"}}`, []string{"unreadable"}},
				{"doctor", []string{"--project", proj, "doctor"}, "", []string{"tasks.json"}},
				{"mcp", []string{"mcp"}, mcpIn, []string{"tasks.json"}},
				{"memory gc", []string{"--project", proj, "memory", "gc"}, "", []string{"memory-access.jsonl"}},
			} {
				out, peak, err := runBounded(t, bin, proj, env, c.stdin, 10*time.Second, c.args...)
				if errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("%s did not finish within 10 s (hung on a %s?)\n%s", c.name, k, out)
				}
				t.Logf("%s: peak RSS %.1f MiB", c.name, float64(peak)/(1<<20))
				if peak > 128<<20 {
					t.Errorf("%s peaked at %d MiB of RSS (limit 128 MiB)", c.name, peak>>20)
				}
				if len(c.names) > 0 && !containsAny(out, c.names) {
					t.Errorf("%s does not name the refused file (%v):\n%s", c.name, c.names, out)
				}
			}
		})
	}
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// runBounded runs bin with a deadline and returns its output (stdout,
// then stderr) and peak resident set (bytes, from getrusage of the child:
// see testenv.RunBounded). A run past the deadline is killed with its
// process group.
func runBounded(t *testing.T, bin, dir string, env []string, stdin string, d time.Duration, args ...string) (string, int64, error) {
	t.Helper()
	o := testenv.RunBounded(testenv.Bounded{RSSRun: built(t, "rssrun"), Bin: bin, Args: args, Dir: dir, Env: env, Stdin: []byte(stdin), Wall: d})
	out := string(o.Stdout) + string(o.Stderr)
	if o.Killed != "" {
		return out, o.MaxRSS, context.DeadlineExceeded
	}
	if o.Err != nil {
		t.Fatalf("run %s: %v\n%s", bin, o.Err, out)
	}
	return out, o.MaxRSS, nil
}
