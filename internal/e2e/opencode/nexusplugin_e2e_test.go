//go:build e2e

package opencode

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/catalog"
	oc "github.com/nexus-harness/nexus/harness/host/opencode"
	ocsetup "github.com/nexus-harness/nexus/harness/host/opencode/setup"
	fc "github.com/nexus-harness/nexus/internal/fakechat"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/vocabulary"
)

// installGenerated writes the generated plugin (running the fake nexus)
// into the session's project and returns the fake nexus's log.
func installGenerated(t testing.TB, s *session, dir string) string {
	t.Helper()
	b, err := ocsetup.Plugin(ocsetup.PluginOptions{Nexus: fakeNexus(t), Project: s.proj, Version: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(s.proj, ".opencode", dir, ocsetup.PluginFile), b)
	return filepath.Join(s.root, "fake-nexus.jsonl")
}

// architectAgent renders the vendored architect role as host/opencode
// does: its body, the model, and the permissions its capabilities give.
func architectAgent(t testing.TB) (ocsetup.Agent, []byte) {
	t.Helper()
	core, err := vocabulary.LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Build(catalog.Options{Core: core, ToolPrefix: "nx_"}.WithHost(oc.Profile()))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := core.Agent("architect")
	body, err := core.ReadAgentBody("architect")
	if err != nil {
		t.Fatal(err)
	}
	var denied []string
	for _, ca := range c.Agents {
		if ca.ID == "architect" {
			denied = ca.Denied
		}
	}
	ag := ocsetup.Agent{ID: "architect", Description: a.Description, Body: body, Model: "fake/fake-model", Deny: ocsetup.Permissions(denied)}
	md, err := ocsetup.AgentMD(ag)
	if err != nil {
		t.Fatal(err)
	}
	return ag, md
}

// TestE2EOpenCodeGeneratedPlugin: the real OpenCode loads the plugin nexus
// generates (a fake nexus behind it): every hook reaches one long-lived
// child over the FIFOs, the refusal it answers is what the model gets for
// the call and nothing runs, its context reaches the model as a synthetic
// part of the user's message and after a tool's result, dispose ends the
// child; the architect rendered by host/opencode runs through the task
// tool with its body as the system prompt and without the tools its
// permissions deny.
func TestE2EOpenCodeGeneratedPlugin(t *testing.T) {
	t.Parallel()
	const prompt = "e2e: the generated plugin"
	api := fc.New(
		fc.Turn{Name: "blocked", When: fc.Prompt(prompt), Reply: fc.Reply{Calls: []fc.Call{
			{ID: "call_blocked", Name: "bash", Args: map[string]any{"command": "echo BLOCKME > blocked.txt", "description": "Refused"}}}}},
		fc.Turn{Name: "read", When: fc.After("call_blocked"), Reply: fc.Reply{Calls: []fc.Call{
			{ID: "call_read", Name: "read", Args: map[string]any{"filePath": "f.txt"}}}}},
		fc.Turn{Name: "task", When: fc.After("call_read"), Reply: fc.Reply{Calls: []fc.Call{
			{ID: "call_task", Name: "task", Args: map[string]any{"description": "Design it", "prompt": "ARCH-PROMPT design", "subagent_type": "architect"}}}}},
		fc.Turn{Name: "arch", When: fc.Prompt("ARCH-PROMPT"), Reply: fc.Reply{Text: "ARCH-DONE"}},
		fc.Turn{Name: "final", When: fc.After("call_task"), Reply: fc.Reply{Text: "LEAD-DONE"}},
	)
	defer api.Close()
	s := newSession(t, api, sessionOpts{})
	s.env = append(s.env, "FAKE_NEXUS_LOG="+filepath.Join(s.root, "fake-nexus.jsonl"))
	log := installGenerated(t, s, "plugins")
	seedPluginDeps(t, filepath.Join(s.proj, ".opencode"))
	ag, md := architectAgent(t)
	writeFile(t, filepath.Join(s.proj, ".opencode", ocsetup.AgentPath("architect")), md)
	writeFile(t, filepath.Join(s.proj, "f.txt"), []byte("x\n"))
	r := s.run(prompt, "--title", "e2e")

	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("turns never reached: %v\nstderr: %s", u, tail(r.stderr, 3000))
	}
	first, _ := api.Answered("blocked")
	if got := first.Chat.FirstUserText(); !strings.HasPrefix(got, prompt+"\nFAKE-CONTEXT for ses_") {
		t.Errorf("first user message %q: the plugin's part should follow the prompt", got)
	}
	read, _ := api.Answered("read")
	if res, _ := read.Chat.ToolResult("call_blocked"); res.Content.Text() != "fake nexus blocked the call (serve)\n" {
		t.Errorf("the blocked call's result %q", res.Content.Text())
	}
	if _, err := os.Stat(filepath.Join(s.proj, "blocked.txt")); !os.IsNotExist(err) {
		t.Errorf("the blocked command ran: %v", err)
	}
	task, _ := api.Answered("task")
	if res, _ := task.Chat.ToolResult("call_read"); !strings.HasSuffix(res.Content.Text(), "\n\nFAKE-APPEND (serve)\n") {
		t.Errorf("the read result %q should end with the plugin's addition", res.Content.Text())
	}

	child, _ := api.Answered("arch")
	if sys := child.Chat.SystemText(); !strings.HasPrefix(sys, strings.TrimSpace(ag.Body)[:40]) {
		t.Errorf("the architect's system prompt does not start with its body: %.200q", sys)
	}
	for _, tool := range []string{"write", "edit", "apply_patch", "nexus_nx_task_add", "nexus_nx_task_update", "nexus_nx_task_close"} {
		if child.Chat.HasTool(tool) {
			t.Errorf("the architect is offered %s (its permission %v)", tool, ag.Deny)
		}
	}
	for _, tool := range []string{"bash", "read", "nexus_nx_task_list", "nexus_nx_artifact_write"} {
		if !child.Chat.HasTool(tool) {
			t.Errorf("the architect lacks %s: %v", tool, child.Chat.ToolNames())
		}
	}
	if got := child.Chat.FirstUserText(); !strings.HasPrefix(got, "ARCH-PROMPT design\nFAKE-CONTEXT for ses_") {
		t.Errorf("the child's first message %q", got)
	}

	// What the fake nexus saw: one child answered everything, in order.
	rg := &rig{t: t, log: log}
	reqs := rg.requests()
	var hooks []string
	pids := map[int]bool{}
	for _, q := range reqs {
		hooks = append(hooks, q.Hook)
		pids[q.PID] = true
		if q.Mode != "serve" {
			t.Errorf("request %d (%s) answered by a %s process", q.ID, q.Hook, q.Mode)
		}
	}
	want := []string{"event", "chat.message", "tool.execute.before", "tool.execute.before", "tool.execute.after", "tool.execute.before", "event", "chat.message", "tool.execute.after", "dispose"}
	if !slices.Equal(hooks, want) {
		t.Errorf("nexus saw\n%v\nwant\n%v", hooks, want)
	}
	if len(pids) != 1 {
		t.Errorf("%d nexus processes answered, want one", len(pids))
	}
	for pid := range pids {
		waitGone(t, pid, "opencode run ended")
	}
}

// BenchmarkOpenCodeNexusPlugin: what nexus adds to a tool call inside the
// real OpenCode (pluginPerCall): nexus installed, its plugin wrapped by
// testdata/timed.js, 100 read calls, tool.execute.before timed
// around the generated hook with the real lifecycle engine behind the
// long-lived child. It reports the median and 90th percentile per call,
// and the session's wall time.
// go test -tags e2e -run '^$' -bench OpenCodeNexusPlugin -benchtime 1x ./internal/e2e/opencode
func BenchmarkOpenCodeNexusPlugin(b *testing.B) {
	var perCall, walls []time.Duration
	for i := 0; i < b.N; i++ {
		calls, wall := pluginPerCall(b, 100)
		perCall, walls = append(perCall, calls...), append(walls, wall)
	}
	b.ReportMetric(float64(median(perCall))/float64(time.Microsecond), "µs-median/call")
	b.ReportMetric(float64(p90(perCall))/float64(time.Microsecond), "µs-p90/call")
	b.ReportMetric(ms(median(walls)), "ms-session")
}

// pluginPerCall runs a session of n sequential read calls with nexus
// installed (ten calls per model turn), its plugin loaded through testdata/timed.js (moved out of
// plugins/, so OpenCode does not load it twice), and returns the time
// each tool.execute.before took and the session's wall time. Every call
// must have gone through the long-lived child: no nexus process per hook
// ran (the child is the only `nexus hook` OpenCode started).
func pluginPerCall(t testing.TB, n int) ([]time.Duration, time.Duration) {
	t.Helper()
	prompt, turns := readTurns(n, 10)
	api := fc.New(turns...)
	defer api.Close()
	timing := filepath.Join(t.TempDir(), "timing.log")
	s := newSession(t, api, sessionOpts{nexus: true, plugins: []string{"timed.js"}})
	// nexus behind a wrapper that logs each start, so the test sees which
	// nexus processes OpenCode ran (its exec costs the child's start only).
	starts := filepath.Join(s.root, "nexus-starts.log")
	wrapper := filepath.Join(s.root, "bin", "nexus")
	writeFile(t, wrapper, []byte("#!/bin/sh\necho \"$*\" >> "+starts+"\nexec "+filepath.Join(binDir, "nexus")+" \"$@\"\n"))
	if err := os.Chmod(wrapper, 0o755); err != nil {
		t.Fatal(err)
	}
	s.install("--command", wrapper)
	gen := filepath.Join(s.proj, ".opencode", "nexus-gen", ocsetup.PluginFile)
	if err := os.MkdirAll(filepath.Dir(gen), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(s.proj, ".opencode", ocsetup.PluginPath), gen); err != nil {
		t.Fatal(err)
	}
	s.env = append(s.env, "OC_TIMING_LOG="+timing, "OC_NEXUS_PLUGIN="+gen)
	for i := range n {
		writeFile(t, filepath.Join(s.proj, fmt.Sprintf("f%d.txt", i)), []byte("x\n"))
	}
	r := s.run(prompt, "--title", "timing")
	if u := api.Unused(); len(u) > 0 {
		t.Fatalf("turns never reached: %v", u[:min(3, len(u))])
	}
	data, err := os.ReadFile(timing)
	if err != nil {
		t.Fatalf("the timing plugin wrote no log: %v", err)
	}
	var got []time.Duration
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		ns, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			t.Fatalf("timing log line %q", line)
		}
		got = append(got, time.Duration(ns))
	}
	if len(got) != n {
		t.Fatalf("%d hook timings, want %d", len(got), n)
	}
	b, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	var hooks []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "hook ") {
			hooks = append(hooks, line)
		}
	}
	if len(hooks) != 1 || !strings.Contains(hooks[0], "--serve") {
		t.Fatalf("nexus hook processes OpenCode ran: %q, want the one long-lived child", hooks)
	}
	return got, r.wall
}
