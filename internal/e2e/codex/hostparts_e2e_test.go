//go:build e2e

package codex

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/nexus-harness/nexus/harness/applypatch"
	codexhost "github.com/nexus-harness/nexus/harness/host/codex"
	codexsetup "github.com/nexus-harness/nexus/harness/host/codex/setup"
	fr "github.com/nexus-harness/nexus/internal/fakeresponses"
	nexuscore "github.com/nexus-harness/nexus/third_party/nexus-core"
)

// The files harness/host/codex renders for Codex, read by the real CLI.

// TestE2ECodexNexusHooksTrusted: the hooks.json nexus writes
// (codexhost.EditHooks) and the trust it records for them
// (codexhost.NexusHooks, then codexsetup.EditConfig into the user's
// config.toml) are what Codex lists as trusted, key by key; removing that
// trust leaves them untrusted.
func TestE2ECodexNexusHooksTrusted(t *testing.T) {
	t.Parallel()
	api := fr.New()
	defer api.Close()
	s := newSession(t, api, sessionOpts{})
	path := filepath.Join(s.codex, codexhost.HooksFile)
	user := []byte(`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}]}}`)
	edit, err := codexhost.EditHooks(user, filepath.Join(binDir, "nexus"), "", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	ours, err := codexhost.NexusHooks(path, edit.Data)
	if err != nil || len(ours) != len(codexhost.InstalledHooks) {
		t.Fatalf("NexusHooks: %d, %v", len(ours), err)
	}
	var trust []codexsetup.TrustEntry
	for _, h := range ours {
		trust = append(trust, codexsetup.TrustEntry{Key: h.Key, Hash: h.Hash})
	}
	cfgPath := filepath.Join(s.codex, codexsetup.ConfigFile)
	setTrust := func(e codexsetup.ConfigEdit) {
		t.Helper()
		cfg, err := os.ReadFile(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		res, err := codexsetup.EditConfig(cfg, e)
		if err != nil || !res.Changed {
			t.Fatalf("EditConfig: changed %v, %v", res.Changed, err)
		}
		if err := os.WriteFile(cfgPath, res.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setTrust(codexsetup.ConfigEdit{Trust: trust})
	listed := s.hooksListFull()
	for _, h := range ours {
		got := listed[h.Key]
		if got.hash != h.Hash || got.trust != "trusted" {
			t.Errorf("%s: Codex lists hash %q, %q; nexus computed %s", h.Key, got.hash, got.trust, h.Hash)
		}
	}
	if got := listed[path+":pre_tool_use:0:0"]; got.trust != "untrusted" {
		t.Errorf("the user's own hook is %q, want untrusted: nexus trusts only its own", got.trust)
	}
	setTrust(codexsetup.ConfigEdit{RemoveTrust: trust})
	listed = s.hooksListFull()
	for _, h := range ours {
		if got := listed[h.Key]; got.trust != "untrusted" {
			t.Errorf("%s after removing the trust: %q", h.Key, got.trust)
		}
	}
}

// distributionRoles reads the id, description and body of every agent or
// skill of the vendored distribution.
func distributionRoles(t *testing.T, kind string) map[string][2]string {
	t.Helper()
	core := nexuscore.FS()
	bodies, err := fs.Glob(core, kind+"/*/body.md")
	if err != nil || len(bodies) == 0 {
		t.Fatalf("no %s in the distribution: %v", kind, err)
	}
	out := map[string][2]string{}
	for _, body := range bodies {
		b, err := fs.ReadFile(core, body)
		if err != nil {
			t.Fatal(err)
		}
		m, err := fs.ReadFile(core, path.Dir(body)+"/meta.yml")
		if err != nil {
			t.Fatal(err)
		}
		var meta struct{ ID, Description string }
		if err := yaml.Unmarshal(m, &meta); err != nil {
			t.Fatal(err)
		}
		out[meta.ID] = [2]string{meta.Description, string(b)}
	}
	return out
}

// TestE2ECodexRenderedAgentsAndSkills: the nine roles rendered by
// codexsetup.AgentTOML load as custom agents (no "malformed agent role"
// error item, which session.run fails on; each offered as an agent_type)
// and the skills rendered by codexsetup.SkillMD are listed to the model.
func TestE2ECodexRenderedAgentsAndSkills(t *testing.T) {
	t.Parallel()
	agents := map[string]string{}
	roles := distributionRoles(t, "agents")
	for id, r := range roles {
		b, err := codexsetup.AgentTOML(codexsetup.Agent{ID: id, Description: r[0], Instructions: r[1], Model: model})
		if err != nil {
			t.Fatal(err)
		}
		agents[id] = string(b)
	}
	api := fr.New(
		fr.Turn{Name: "search", When: fr.Prompt("e2e: roles"), Reply: fr.Reply{Calls: []fr.Call{fr.ToolSearch("c_search", "spawn agent")}}},
		fr.Turn{Name: "answer", When: fr.After("c_search"), Reply: fr.Reply{Text: "Roles seen."}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{agents: agents})
	skills := distributionRoles(t, "skills")
	for id, sk := range skills {
		b, err := codexsetup.SkillMD(codexsetup.Skill{ID: id, Description: sk[0], Body: sk[1]})
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(s.proj, filepath.FromSlash(codexhost.SkillPath(id)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := s.run("e2e: roles")
	if strings.Contains(r.stderr, "failed to load skill") {
		t.Errorf("Codex could not load a skill: %s", r.stderr)
	}
	last, _ := api.Answered("answer")
	found, _ := last.Responses.Output("c_search")
	params := ""
	for _, tl := range found.Tools {
		for _, sub := range tl.Tools {
			if sub.Name == "spawn_agent" {
				params = string(sub.Parameters)
			}
		}
	}
	for id := range roles {
		if !strings.Contains(params, id+": {") {
			t.Errorf("spawn_agent does not offer agent_type %s: %s", id, params)
		}
	}
	dev := last.Responses.DeveloperText()
	for id := range skills {
		if !strings.Contains(dev, "- "+id+": ") {
			t.Errorf("the model is not told about skill %s", id)
		}
	}
}

// TestE2ECodexShellPatches sends apply_patch through exec_command in the
// forms applypatch.InShell reads and compares the files Codex leaves
// with the operations it parsed. Codex applies its intercepted forms (the
// plain heredoc, `cd DIR && apply_patch`) itself: their files must be
// exactly those named. apply_patch run by the shell (after another
// command, inside bash -c) is Codex's PATH helper, which this machine's
// login shell does not find (its /etc/profile resets PATH): those forms
// may write nothing, but never a file the parsed operations do not name —
// the gate's view may only over-approximate.
func TestE2ECodexShellPatches(t *testing.T) {
	t.Parallel()
	patch := func(body string) string { return "*** Begin Patch\n" + body + "*** End Patch\n" }
	cmds := []struct {
		cmd         string
		intercepted bool
	}{
		{"apply_patch <<'EOF'\n" + patch("*** Add File: i1.txt\n+one\n*** Add File: i1b.txt\n+b\n") + "EOF\n", true},
		{"cd sub && apply_patch <<'EOF'\n" + patch("*** Add File: i2.txt\n+two\n*** Add File: ../up.txt\n+up\n") + "EOF\n", true},
		{"true && apply_patch <<'EOF'\n" + patch("*** Add File: s3.txt\n+three\n") + "EOF\n", false},
		{"bash -c \"apply_patch <<'EOF'\n" + patch("*** Add File: s4.txt\n+four\n") + "EOF\n\"", false},
		{"cd 'sub' && applypatch <<EOF\n" + patch("*** Update File: i2.txt\n*** Move to: ../moved/i2.txt\n@@\n-two\n+dos\n*** Delete File: ../i1b.txt\n") + "EOF\n", true},
	}
	var turns []fr.Turn
	for i, c := range cmds {
		when := fr.Prompt("e2e: shell patches")
		if i > 0 {
			when = fr.After(fmt.Sprintf("c%d", i-1))
		}
		turns = append(turns, fr.Turn{Name: fmt.Sprintf("t%d", i), When: when, Reply: fr.Reply{Calls: []fr.Call{fr.Function(fmt.Sprintf("c%d", i), "exec_command", map[string]any{"cmd": c.cmd})}}})
	}
	turns = append(turns, fr.Turn{Name: "answer", When: fr.After(fmt.Sprintf("c%d", len(cmds)-1)), Reply: fr.Reply{Text: "Patched."}})
	api := fr.New(turns...)
	defer api.Close()
	s := newSession(t, api, sessionOpts{})
	if err := os.Mkdir(filepath.Join(s.proj, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.run("e2e: shell patches")
	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("scripted turns never reached: %v", u)
	}
	exact := map[string]bool{} // path -> exists, from the intercepted forms
	named := map[string]bool{} // every path any form names
	for _, c := range cmds {
		ops, found, err := applypatch.InShell(c.cmd)
		if err != nil || !found || len(ops) == 0 {
			t.Fatalf("applypatch.InShell(%q): %+v, found %v, %v", c.cmd, ops, found, err)
		}
		for _, op := range ops {
			for _, e := range op.Effects() {
				p := filepath.Clean(e.Path)
				named[p] = true
				if c.intercepted {
					exact[p] = e.Action != applypatch.ActionRemove
				}
			}
		}
	}
	got := map[string]bool{}
	err := filepath.WalkDir(s.proj, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(s.proj, p)
			got[rel] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p, exists := range exact {
		if got[p] != exists {
			t.Errorf("%s: exists %v, but the parsed operations say %v", p, got[p], exists)
		}
	}
	for p := range got {
		if !named[p] {
			t.Errorf("Codex wrote %s, which no parsed operation names", p)
		}
	}
	last, _ := api.Answered("answer")
	for i, c := range cmds {
		out, _ := last.Responses.Output(fmt.Sprintf("c%d", i))
		if c.intercepted && !strings.Contains(out.Output.Text(), "Success") {
			t.Errorf("command %d was not applied: %s", i, out.Output.Text())
		}
		if !c.intercepted {
			t.Logf("shell-run form %d: %s", i, strings.TrimSpace(out.Output.Text()))
		}
	}
}
