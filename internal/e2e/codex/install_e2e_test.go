//go:build e2e

package codex

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	codexhost "github.com/nexus-harness/nexus/harness/host/codex"
	fr "github.com/nexus-harness/nexus/internal/fakeresponses"
)

// userLines is the user's own part of config.toml in this test: comments,
// a setting and an MCP server of theirs, which nexus must keep byte for
// byte.
const userLines = `
# --- the user's own settings (nexus keeps every byte) ---
[mcp_servers.docs]   # their docs server
command = "/bin/true"
args = ["--stdio"]  # never started in this test: no tool is called
enabled = false
`

// projectConfig is the project's own .codex/config.toml.
const projectConfig = "# team settings for Codex\n# nexus adds its MCP servers below, and keeps these lines\n"

// tree is every file under dir with its content, Codex's and git's own
// bookkeeping aside.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && (rel == ".git" || rel == "home/.codex/sessions" || rel == "home/.codex/tmp" || rel == "home/.codex/skills" || rel == "tmp" ||
			rel == "home/.codex/log" || strings.HasPrefix(rel, "home/.codex/.") || rel == "proj/.nexus") {
			return fs.SkipDir
		}
		if d.IsDir() || strings.HasSuffix(p, ".sqlite") || strings.Contains(p, ".sqlite-") || strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil {
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

// TestE2ECodexInstall: `nexus install codex` into a project whose user has
// their own config.toml and project config: a dry run writes nothing; the
// install keeps every byte of both configurations and says how to trust
// the hooks; a second install changes no file; Codex itself lists nexus's
// hooks as trusted after --trust-hooks; a session started in a bare
// environment (no NEXUS_* variable, nexus not on PATH, as an IDE would
// start it) gets nexus's context, its MCP tools and its gate; uninstall
// leaves both configurations as they were, byte for byte.
func TestE2ECodexInstall(t *testing.T) {
	t.Parallel()
	api := fr.New(
		fr.Turn{Name: "warm", When: fr.All(lead, fr.Prompt("e2e: bare")), Reply: fr.Reply{Calls: []fr.Call{fr.Function("c_warm", "exec_command", map[string]any{"cmd": "true"})}}},
		fr.Turn{Name: "search", When: fr.All(lead, fr.After("c_warm")), Reply: fr.Reply{Calls: []fr.Call{{Kind: fr.KindToolSearch, ID: "c_search", Args: map[string]any{"query": "nexus plan status spawn agent", "limit": 20}}}}},
		fr.Turn{Name: "status", When: fr.All(lead, fr.After("c_search")), Reply: fr.Reply{Calls: []fr.Call{fr.NamespacedFunction("c_status", "mcp__nexus", "nx_plan_status", map[string]any{})}}},
		fr.Turn{Name: "edit", When: fr.All(lead, fr.After("c_status")), Reply: fr.Reply{Calls: []fr.Call{fr.Custom("c_edit", "apply_patch", "*** Begin Patch\n*** Add File: unplanned.txt\n+x\n*** End Patch\n")}}},
		fr.Turn{Name: "answer", When: fr.All(lead, fr.After("c_edit")), Reply: fr.Reply{Text: "Bare done."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{userConfig: userLines})
	for _, kv := range s.env {
		if strings.HasPrefix(kv, "NEXUS_") || strings.Contains(kv, binDir) {
			t.Fatalf("the session's environment carries %s", kv)
		}
	}
	projCfg := filepath.Join(s.proj, ".codex", "config.toml")
	if err := os.MkdirAll(filepath.Dir(projCfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(projCfg, []byte(projectConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	userCfg := filepath.Join(s.codex, "config.toml")
	before := tree(t, s.root)

	out := s.nexus("install", "codex", "--dry-run")
	if got := tree(t, s.root); !sameTree(got, before) {
		t.Fatalf("the dry run wrote files:\n%s", out)
	}
	out = s.nexus("install", "codex", "--trust-hooks")
	if !strings.Contains(out, "hooks.json: written") {
		t.Errorf("install output:\n%s", out)
	}
	installed := tree(t, s.root)
	for _, f := range []string{userCfg, projCfg} {
		rel, _ := filepath.Rel(s.root, f)
		if !keepsLines(before[rel], installed[rel]) {
			t.Errorf("%s lost bytes of the user's:\n%s", rel, installed[rel])
		}
	}
	if out := s.nexus("install", "codex", "--trust-hooks"); strings.Contains(out, ": written") || strings.Contains(out, ": updated") {
		t.Errorf("a second install changed files:\n%s", out)
	}
	if got := tree(t, s.root); !sameTree(got, installed) {
		t.Error("a second install changed files on disk")
	}
	// Codex itself: every hook nexus wrote is trusted.
	listed := s.hooksListFull()
	hooksPath := filepath.Join(s.proj, ".codex", "hooks.json")
	ours, err := codexhost.NexusHooks(hooksPath, []byte(installed["proj/.codex/hooks.json"]))
	if err != nil || len(ours) != len(codexhost.InstalledHooks) {
		t.Fatalf("nexus's hooks: %d %v", len(ours), err)
	}
	for _, h := range ours {
		if got := listed[h.Key]; got.trust != "trusted" || got.hash != h.Hash {
			t.Errorf("Codex lists %s as %q (hash %s, nexus wrote %s)", h.Key, got.trust, got.hash, h.Hash)
		}
	}

	// A session in the bare environment.
	s.run("e2e: bare")
	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	first, _ := api.Answered("warm")
	if !strings.Contains(first.Responses.DeveloperText(), "nexus is active for this project") {
		t.Error("no SessionStart context from nexus")
	}
	r, _ := api.Answered("edit")
	if o, _ := r.Responses.Output("c_status"); !strings.Contains(o.Output.Text(), `"active":false`) {
		t.Errorf("nx_plan_status in the bare environment: %q", o.Output.Text())
	}
	r, _ = api.Answered("answer")
	if o, _ := r.Responses.Output("c_edit"); !strings.Contains(o.Output.Text(), "edits outside a planned task cycle are not allowed") {
		t.Errorf("the gate in the bare environment: %q", o.Output.Text())
	}
	if _, err := os.Stat(filepath.Join(s.proj, "unplanned.txt")); !os.IsNotExist(err) {
		t.Errorf("the unplanned edit ran (%v)", err)
	}

	s.nexus("uninstall", "codex")
	after := tree(t, s.root)
	for _, rel := range []string{"home/.codex/config.toml", "proj/.codex/config.toml"} {
		if after[rel] != before[rel] {
			t.Errorf("%s after uninstall:\n%s\nwant\n%s", rel, after[rel], before[rel])
		}
	}
	// What install wrote in the project is gone (Codex's own files in its
	// home, which the session created, are not nexus's).
	for rel := range after {
		if _, ok := before[rel]; !ok && strings.HasPrefix(rel, "proj/") && !strings.Contains(rel, ".nexus-backup-") {
			t.Errorf("uninstall left %s", rel)
		}
	}
}

// keepsLines reports whether every line of before appears in after, in
// order.
func keepsLines(before, after string) bool {
	rest := after
	for _, l := range strings.SplitAfter(before, "\n") {
		i := strings.Index(rest, l)
		if i < 0 {
			return false
		}
		rest = rest[i+len(l):]
	}
	return true
}

func sameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}
