//go:build e2e

package opencode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	oc "github.com/nexus-harness/nexus/harness/host/opencode"
	ocsetup "github.com/nexus-harness/nexus/harness/host/opencode/setup"
)

var (
	fakeOnce sync.Once
	fakeBin  string
	fakeErr  error
)

// fakeNexus builds testdata/fakenexus once: a stand-in for nexus that
// answers the plugin's wire protocol through opencode.Serve.
func fakeNexus(t testing.TB) string {
	t.Helper()
	fakeOnce.Do(func() {
		fakeBin = filepath.Join(binDir, "fakenexus")
		out, err := exec.Command("go", "build", "-o", fakeBin, "./testdata/fakenexus").CombinedOutput()
		if err != nil {
			fakeErr = err
			fakeBin = string(out)
		}
	})
	if fakeErr != nil {
		t.Fatalf("go build fakenexus: %v\n%s", fakeErr, fakeBin)
	}
	return fakeBin
}

// nodeBin is Node.js, which the plugin tests run the generated plugin in;
// they fail (never skip) without it.
func nodeBin(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node (Node.js 20+) is not on PATH: %v; make e2e needs it", err)
	}
	return p
}

// rig is one generated plugin, the program it runs, and its log.
type rig struct {
	t      testing.TB
	dir    string
	plugin string
	log    string
}

func newRig(t *testing.T, o ocsetup.PluginOptions) *rig {
	t.Helper()
	dir := t.TempDir()
	if o.Nexus == "" {
		o.Nexus = fakeNexus(t)
	}
	b, err := ocsetup.Plugin(o)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, dir: dir, plugin: filepath.Join(dir, "nexus.js"), log: filepath.Join(dir, "fake.jsonl")}
	writeFile(t, r.plugin, b)
	return r
}

type step struct {
	Hook     string `json:"hook"`
	Input    any    `json:"input,omitempty"`
	Output   any    `json:"output,omitempty"`
	Circular bool   `json:"circular,omitempty"`
	Wait     bool   `json:"wait,omitempty"`
	SleepMS  int    `json:"sleepMs,omitempty"`
}

type driven struct {
	Hook    string          `json:"hook"`
	OK      bool            `json:"ok"`
	Output  json.RawMessage `json:"output"`
	Threw   string          `json:"threw"`
	NS      int64           `json:"ns"`
	Waiting bool            `json:"waiting"`
}

func (r *rig) command(ctx context.Context, steps []step, env ...string) *exec.Cmd {
	r.t.Helper()
	b, _ := json.Marshal(steps)
	sf := filepath.Join(r.dir, "steps.json")
	writeFile(r.t, sf, b)
	cmd := exec.CommandContext(ctx, nodeBin(r.t), "testdata/drive.mjs", r.plugin, sf)
	cmd.Env = append([]string{"PATH=" + sysPath, "HOME=" + r.dir, "TMPDIR=" + r.dir, "DRIVE_DIR=" + r.dir, "FAKE_NEXUS_LOG=" + r.log}, env...)
	return cmd
}

// drive runs the steps in Node and returns one result per step.
func (r *rig) drive(steps []step, env ...string) []driven {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := r.command(ctx, steps, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("node drive.mjs: %v\n%s", err, stderr.String())
	}
	var res []driven
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var d driven
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			r.t.Fatalf("drive.mjs printed %q: %v", l, err)
		}
		res = append(res, d)
	}
	if len(res) != len(steps) {
		r.t.Fatalf("%d results for %d steps: %s\n%s", len(res), len(steps), out, stderr.String())
	}
	return res
}

// logged is one request the fake nexus received.
type logged struct {
	PID  int        `json:"pid"`
	Mode string     `json:"mode"`
	ID   uint64     `json:"id"`
	Hook string     `json:"hook"`
	Req  oc.Request `json:"req"`
}

func (r *rig) requests() []logged {
	r.t.Helper()
	b, err := os.ReadFile(r.log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		r.t.Fatal(err)
	}
	var out []logged
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var g logged
		if err := json.Unmarshal(l, &g); err != nil {
			r.t.Fatalf("fake nexus log %q: %v", l, err)
		}
		out = append(out, g)
	}
	return out
}

// alive reports whether a process exists (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state is the field after the command name in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func waitGone(t *testing.T, pid int, why string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the nexus child %d is still running 10 s after %s", pid, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func toolStep(hook, tool, call string, args map[string]any) step {
	in := map[string]any{"tool": tool, "sessionID": "ses_root", "callID": call}
	if hook == oc.HookToolAfter {
		in["args"] = args
		return step{Hook: hook, Input: in, Output: map[string]any{"title": tool, "output": "RESULT", "metadata": map[string]any{}}}
	}
	return step{Hook: hook, Input: in, Output: map[string]any{"args": args}}
}

func chatStep(session, text string) step {
	return step{Hook: oc.HookChatMessage, Input: map[string]any{"sessionID": session},
		Output: map[string]any{"message": map[string]any{"id": "msg_1", "sessionID": session, "role": "user"},
			"parts": []any{map[string]any{"id": "prt_1", "type": "text", "text": text, "sessionID": session, "messageID": "msg_1"}}}}
}

// TestE2EOpenCodePluginProtocol runs the generated plugin in Node against
// the fake nexus: every hook goes to one long-lived child over the FIFOs,
// its answers are applied (a synthetic part, a thrown denial, text added
// to a tool's result, an MCP result's content), bus events other than
// session.created stay in the plugin, arguments with cycles and long
// results are forwarded, and dispose ends the child.
func TestE2EOpenCodePluginProtocol(t *testing.T) {
	t.Parallel()
	r := newRig(t, ocsetup.PluginOptions{Project: ""})
	long := strings.Repeat("x", ocsetup.ClipLength+500)
	res := r.drive([]step{
		{Hook: oc.HookEvent, Input: map[string]any{"event": map[string]any{"type": "session.created", "properties": map[string]any{"info": map[string]any{"id": "ses_root"}}}}},
		{Hook: oc.HookEvent, Input: map[string]any{"event": map[string]any{"type": "message.part.delta", "properties": map[string]any{}}}},
		chatStep("ses_root", "hello"),
		toolStep(oc.HookToolBefore, "bash", "c1", map[string]any{"command": "echo ok"}),
		toolStep(oc.HookToolBefore, "bash", "c2", map[string]any{"command": "echo BLOCKME > x"}),
		toolStep(oc.HookToolAfter, "bash", "c1", map[string]any{"command": "echo ok"}),
		{Hook: oc.HookToolAfter, Input: map[string]any{"tool": "nexus_nx_task_list", "sessionID": "ses_root", "callID": "c3", "args": map[string]any{}},
			Output: map[string]any{"content": []any{map[string]any{"type": "text", "text": "{}"}}}},
		{Hook: oc.HookToolAfter, Input: map[string]any{"tool": "read", "sessionID": "ses_root", "callID": "c4", "args": map[string]any{"filePath": "big"}},
			Output: map[string]any{"title": "big", "output": long}},
		{Hook: oc.HookToolBefore, Input: map[string]any{"tool": "read", "sessionID": "ses_root", "callID": "c5"}, Output: map[string]any{"args": map[string]any{"filePath": "a"}}, Circular: true},
		{Hook: oc.HookDispose},
	})
	want := []struct {
		ok    bool
		threw string
		out   string
	}{
		{ok: true}, {ok: true},
		{ok: true, out: `"text":"FAKE-CONTEXT for ses_root","synthetic":true`},
		{ok: true},
		{threw: "fake nexus blocked the call (serve)"},
		{ok: true, out: `"output":"RESULT\n\nFAKE-APPEND (serve)"`},
		{ok: true, out: `{"type":"text","text":"FAKE-APPEND (serve)"}`},
		{ok: true}, {ok: true}, {ok: true},
	}
	for i, w := range want {
		g := res[i]
		if g.OK != w.ok || g.Threw != w.threw || !strings.Contains(string(g.Output), w.out) {
			t.Errorf("step %d (%s): ok %v threw %q output %s; want ok %v threw %q output with %s", i, g.Hook, g.OK, g.Threw, g.Output, w.ok, w.threw, w.out)
		}
	}
	if !strings.Contains(string(res[2].Output), `"id":"prt_1nx0","sessionID":"ses_root","messageID":"msg_1","type":"text"`) {
		t.Errorf("the synthetic part's ids: %s", res[2].Output)
	}

	reqs := r.requests()
	var hooks []string
	pids := map[int]bool{}
	for _, q := range reqs {
		hooks = append(hooks, q.Hook)
		pids[q.PID] = true
		if q.Mode != "serve" {
			t.Errorf("request %d (%s) answered by a %s process, want the long-lived child", q.ID, q.Hook, q.Mode)
		}
		if q.Req.V != oc.ProtocolVersion || q.Req.PID == 0 || q.Req.Dir != r.dir {
			t.Errorf("request %d: v %d pid %d dir %q", q.ID, q.Req.V, q.Req.PID, q.Req.Dir)
		}
	}
	wantHooks := "event chat.message tool.execute.before tool.execute.before tool.execute.after tool.execute.after tool.execute.after tool.execute.before dispose"
	if got := strings.Join(hooks, " "); got != wantHooks {
		t.Errorf("nexus saw %s\nwant %s", got, wantHooks)
	}
	if len(pids) != 1 {
		t.Errorf("%d nexus processes answered, want one long-lived child", len(pids))
	}
	for _, q := range reqs {
		switch q.ID {
		case 7:
			var out struct{ Output string }
			json.Unmarshal(q.Req.Output, &out)
			if !strings.HasSuffix(out.Output, ocsetup.Clipped) || len(out.Output) != ocsetup.ClipLength+len(ocsetup.Clipped) {
				t.Errorf("a long tool result reached nexus as %d bytes ending %q", len(out.Output), out.Output[max(0, len(out.Output)-40):])
			}
		case 8:
			if !strings.Contains(string(q.Req.Input), `"self":"[circular]"`) {
				t.Errorf("the cyclic input reached nexus as %s", q.Req.Input)
			}
		}
	}
	for pid := range pids {
		waitGone(t, pid, "dispose")
	}
}

// TestE2EOpenCodePluginFallback: when the long-lived child dies, the
// request it did not answer and every later one go to one nexus process
// per hook; without mkfifo the plugin starts that way.
func TestE2EOpenCodePluginFallback(t *testing.T) {
	t.Parallel()
	t.Run("child dies", func(t *testing.T) {
		r := newRig(t, ocsetup.PluginOptions{})
		res := r.drive([]step{
			toolStep(oc.HookToolBefore, "bash", "c1", map[string]any{"command": "echo one"}),
			toolStep(oc.HookToolBefore, "bash", "c2", map[string]any{"command": "echo CRASHCHILD"}),
			toolStep(oc.HookToolBefore, "bash", "c3", map[string]any{"command": "echo BLOCKME"}),
			toolStep(oc.HookToolAfter, "bash", "c1", map[string]any{"command": "echo one"}),
		})
		if !res[0].OK || !res[1].OK || res[2].Threw != "fake nexus blocked the call (once)" || !strings.Contains(string(res[3].Output), "FAKE-APPEND (once)") {
			t.Errorf("results %+v", res)
		}
		var modes []string
		pids := map[int]bool{}
		for _, q := range r.requests() {
			modes = append(modes, q.Mode)
			pids[q.PID] = true
		}
		if got := strings.Join(modes, " "); got != "serve serve once once once" {
			t.Errorf("answered by %s, want the child twice (it died on the second), then one process per hook", got)
		}
		if len(pids) != 4 {
			t.Errorf("%d processes, want the child and three of its own", len(pids))
		}
	})
	t.Run("no mkfifo", func(t *testing.T) {
		r := newRig(t, ocsetup.PluginOptions{})
		// Node is found by its absolute path; mkfifo is not on PATH.
		res := r.drive([]step{toolStep(oc.HookToolBefore, "bash", "c1", map[string]any{"command": "BLOCKME"}), chatStep("ses_x", "hi")}, "PATH=/nonexistent")
		if res[0].Threw != "fake nexus blocked the call (once)" || !strings.Contains(string(res[1].Output), "FAKE-CONTEXT for ses_x") {
			t.Errorf("results %+v", res)
		}
		for _, q := range r.requests() {
			if q.Mode != "once" {
				t.Errorf("request %d answered by the %s child without mkfifo", q.ID, q.Mode)
			}
		}
	})
}

// TestE2EOpenCodePluginFailsClosed: when neither the child nor a process
// of its own answers, the plugin refuses tool calls with the reason and
// lets every other hook go on unchanged; an answer that comes too late is
// refused too, and skipped when it arrives.
func TestE2EOpenCodePluginFailsClosed(t *testing.T) {
	t.Parallel()
	t.Run("no nexus", func(t *testing.T) {
		r := newRig(t, ocsetup.PluginOptions{Nexus: "/nonexistent/nexus"})
		res := r.drive([]step{toolStep(oc.HookToolBefore, "bash", "c1", map[string]any{"command": "ls"}), chatStep("ses_x", "hi"), toolStep(oc.HookToolAfter, "bash", "c1", map[string]any{"command": "ls"})})
		if !strings.HasPrefix(res[0].Threw, "nexus could not check this tool call (") || !strings.Contains(res[0].Threw, "ENOENT") ||
			!strings.HasSuffix(res[0].Threw, "A tool call nexus cannot check does not run; `nexus doctor` shows what is wrong, and `nexus install opencode` rewrites the plugin.") {
			t.Errorf("the refused call threw %q", res[0].Threw)
		}
		if !res[1].OK || strings.Contains(string(res[1].Output), "synthetic") || !res[2].OK || strings.Contains(string(res[2].Output), "FAKE") {
			t.Errorf("other hooks: %+v", res[1:])
		}
	})
	t.Run("too slow", func(t *testing.T) {
		r := newRig(t, ocsetup.PluginOptions{Timeout: time.Second})
		blocked := toolStep(oc.HookToolBefore, "bash", "c2", map[string]any{"command": "BLOCKME"})
		blocked.SleepMS = 2500 // the child answers the slow call meanwhile
		res := r.drive([]step{
			toolStep(oc.HookToolBefore, "bash", "c1", map[string]any{"command": "SLOWME"}),
			blocked,
			toolStep(oc.HookToolBefore, "bash", "c3", map[string]any{"command": "ok"}),
		})
		if res[0].Threw != "nexus could not check this tool call (nexus did not answer within 1 s). A tool call nexus cannot check does not run; `nexus doctor` shows what is wrong, and `nexus install opencode` rewrites the plugin." {
			t.Errorf("the slow call threw %q", res[0].Threw)
		}
		// The child's late answer to the slow call is skipped; the next
		// answers pair up with their calls.
		if res[1].Threw != "fake nexus blocked the call (serve)" || !res[2].OK {
			t.Errorf("after the timeout: %+v", res[1:])
		}
	})
}

// TestE2EOpenCodePluginParentDies: the long-lived child ends when the
// process that started it (OpenCode; here Node) is killed, since its
// input closes: OpenCode kills no plugin child and gives no dispose on a
// signal.
func TestE2EOpenCodePluginParentDies(t *testing.T) {
	t.Parallel()
	r := newRig(t, ocsetup.PluginOptions{})
	cmd := r.command(context.Background(), []step{toolStep(oc.HookToolBefore, "bash", "c1", map[string]any{"command": "ls"}), {Hook: "-", Wait: true}})
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"waiting":true`) {
			break
		}
	}
	reqs := r.requests()
	if len(reqs) != 1 || reqs[0].Mode != "serve" {
		t.Fatalf("requests %+v", reqs)
	}
	child := reqs[0].PID
	if !alive(child) {
		t.Fatal("the child is gone before its parent")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	waitGone(t, child, "its parent was killed")
}
