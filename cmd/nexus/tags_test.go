package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// projectFiles lists every file beneath dir (outside .git) with its
// content, to tell whether a command wrote anything.
func projectFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

// TestTagsExplainIsTheHook: `nexus tags explain` runs the very code of the
// UserPromptSubmit hook and writes nothing: for each prompt, in a project
// set up for it, explain's reply is the reply the real hook then gives
// byte for byte, each inline action's outcome is in it, and the project
// is unchanged by explain.
func TestTagsExplainIsTheHook(t *testing.T) {
	bin := buildNexus(t, t.TempDir())
	home := t.TempDir()
	env := hookEnv(t, home)
	plan := `{"schema_version":"0.5","id":1,"topic":"cache","issues":[{"id":1,"title":"eviction","status":"pending"}],"created_at":"2026-04-16T08:52:55.250Z"}`
	twoIssues := `{"schema_version":"0.5","id":1,"topic":"cache","issues":[{"id":1,"title":"eviction","status":"pending"},{"id":2,"title":"size","status":"pending"}],"created_at":"2026-04-16T08:52:55.250Z"}`
	memory := "# Sqlite Wal Readers\n\nsqlite in WAL mode needs shared memory for readers\n"
	for _, tc := range []struct {
		name, prompt string
		files        map[string]string // project-relative
		outcome      string            // in the first action's outcome
	}{
		{"[m] without category", "[m] remember this", nil, "nothing saved yet"},
		{"[m] saves", "[m] empirical: sqlite WAL mode readers need shared memory on the same host", nil, "saved to .nexus/memory/empirical-"},
		{"[m] merges", "[m] empirical: sqlite WAL readers need the shm file", map[string]string{".nexus/memory/empirical-sqlite-wal-readers.md": memory}, "extended empirical-sqlite-wal-readers.md"},
		{"[d] without a plan", "[d] use LRU", nil, "No active plan session"},
		{"[d] records", "[d] use LRU", map[string]string{".nexus/state/plan.json": plan}, `recorded the decision on issue #1 "eviction"`},
		{"[d] ambiguous", "[d] use LRU", map[string]string{".nexus/state/plan.json": twoIssues}, "cannot tell which one this decides"},
		{"[rule] new", "[rule:testing] always run go test -race", nil, "saved the rule to .nexus/rules/testing.md"},
		{"[rule] appended", "[rule:testing] and go vet", map[string]string{".nexus/rules/testing.md": "always run go test -race\n"}, "added the rule to .nexus/rules/testing.md"},
		{"[m:gc]", "[m:gc] tidy up", map[string]string{".nexus/memory/pattern-x.md": "# X\n\nx\n"}, "[m:gc]"},
		{"skill and actions", "[plan] cache design [rule] keep it small [m] remember this", nil, "saved the rule"},
		{"no tags", "just a question", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj := t.TempDir()
			if out, err := exec.Command("git", "-C", proj, "init", "-q").CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			for rel, content := range tc.files {
				writeTestFile(t, filepath.Join(proj, rel), content)
			}
			before := projectFiles(t, proj)
			out, errOut, code := runNexus(t, bin, proj, env, "", "--json", "tags", "explain", tc.prompt)
			if code != 0 {
				t.Fatalf("explain: exit %d\n%s", code, errOut)
			}
			var ex struct {
				Tags  []lifecycle.Explanation `json:"tags"`
				Reply lifecycle.Reply         `json:"reply"`
			}
			if err := json.Unmarshal([]byte(out), &ex); err != nil {
				t.Fatalf("explain --json: %v\n%s", err, out)
			}
			if after := projectFiles(t, proj); len(after) != len(before) {
				t.Fatalf("explain wrote to the project: %v, was %v", keys(after), keys(before))
			} else {
				for k, v := range before {
					if after[k] != v {
						t.Fatalf("explain changed %s", k)
					}
				}
			}
			res := runHook(t, bin, proj, env, payload(t, map[string]any{"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": proj, "prompt": tc.prompt}), "--host", "claude")
			var hook struct {
				SystemMessage string `json:"systemMessage"`
				Specific      struct {
					Context string `json:"additionalContext"`
				} `json:"hookSpecificOutput"`
			}
			if res.stdout != "" {
				if err := json.Unmarshal([]byte(res.stdout), &hook); err != nil {
					t.Fatalf("hook: %v\n%s", err, res.stdout)
				}
			}
			// The notice is what the actions did; the context ends with the
			// project's status, which explain (writing nothing) gives as it
			// was before the actions.
			beforeStatus := func(s string) string { return strings.SplitN(s, "nexus status:\n", 2)[0] }
			if beforeStatus(hook.Specific.Context) != beforeStatus(ex.Reply.Context) || hook.SystemMessage != ex.Reply.Notice {
				t.Errorf("explain's reply differs from the hook's:\nexplain context %q\nhook    context %q\nexplain notice %q\nhook    notice %q",
					beforeStatus(ex.Reply.Context), beforeStatus(hook.Specific.Context), ex.Reply.Notice, hook.SystemMessage)
			}
			actions := 0
			for _, x := range ex.Tags {
				_, outcome, ok := strings.Cut(x.What, "): ")
				if !x.Fires || !strings.HasPrefix(x.What, "inline action") || !ok {
					continue
				}
				if actions == 0 && !strings.Contains(outcome, tc.outcome) {
					t.Errorf("outcome %q does not say %q", outcome, tc.outcome)
				}
				actions++
				if !strings.Contains(hook.SystemMessage, outcome) {
					t.Errorf("explain's outcome %q is not the hook's:\n%s", outcome, hook.SystemMessage)
				}
			}
			if (actions == 0) != (tc.outcome == "") {
				t.Errorf("%d inline actions explained: %+v", actions, ex.Tags)
			}
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
