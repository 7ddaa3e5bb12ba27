package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
)

var commands testenv.Commands

func TestMain(m *testing.M) {
	code := m.Run()
	commands.Remove()
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func run(t *testing.T, bin, dir string, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

func env(t *testing.T, home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"NEXUS_CORE_DIR=" + testenv.CoreDir(t)}
}

// TestFrontMatchesFull runs the same session through the front (nexus,
// which runs the hot commands itself) and through nexus-full, each in a
// fresh project, and wants the same replies, messages and exit statuses:
// the front is a faster way to run the same code, never another
// behaviour. Invocations the front does not take (help, a global flag
// before the command, an extra argument) reach nexus-full through it.
func TestFrontMatchesFull(t *testing.T) {
	front := commands.Path(t, "./cmd/nexus")
	full := filepath.Join(filepath.Dir(front), "nexus-full")
	steps := []struct {
		stdin string
		args  []string
	}{
		{`{"hook_event_name":"SessionStart","cwd":"PROJ","session_id":"s1"}`, []string{"hook", "--host", "claude", "--managed"}},
		{`{"hook_event_name":"UserPromptSubmit","cwd":"PROJ","session_id":"s1","prompt":"[plan] a cache"}`, []string{"hook", "--host=claude"}},
		{`{"hook_event_name":"SubagentStart","cwd":"PROJ","session_id":"s1","agent_id":"a1","agent_type":"nexus:architect"}`, []string{"hook", "SubagentStart"}},
		{`{"hook_event_name":"PreToolUse","cwd":"PROJ","session_id":"s1","agent_id":"a1","agent_type":"nexus:architect","tool_name":"Edit","tool_input":{"file_path":"PROJ/x.go"}}`, []string{"hook"}},
		{`{"hook_event_name":"PostToolUse","cwd":"PROJ","session_id":"s1","tool_name":"Read","tool_input":{"file_path":"PROJ/x.go"},"tool_response":{}}`, []string{"hook", "--host", "claude", "--plugin"}},
		{`{"session_id":"neutral","event":"session_start","cwd":"PROJ"}`, []string{"hook", "--host", "neutral"}},
		{`{"cwd":"PROJ","hook_event_name":"SessionStart","model":"gpt-5.5","permission_mode":"bypassPermissions","session_id":"c1","source":"startup","transcript_path":"/tmp/rollout.jsonl"}`, []string{"hook", "--host", "codex"}},
		{`{"cwd":"PROJ","hook_event_name":"PreToolUse","model":"gpt-5.5","permission_mode":"bypassPermissions","session_id":"c1","transcript_path":"/tmp/rollout.jsonl","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"call_1","turn_id":"t1"}`, []string{"hook", "--host", "codex", "PreToolUse"}},
		{`not json`, []string{"hook", "--host", "claude"}},
		{`{"hook_event_name":"PreToolUse"}`, []string{"hook", "--host", "claude", "--project", "PROJ/missing"}},
		{`{"v":1,"id":1,"hook":"chat.message","pid":1,"dir":"PROJ","input":{"sessionID":"o1"},"output":{"parts":[{"type":"text","text":"[plan] a cache"}]}}`, []string{"hook", "--host", "opencode"}},
		{`{"v":1,"id":2,"hook":"tool.execute.before","pid":1,"dir":"PROJ","input":{"tool":"write","sessionID":"o1","callID":"c1"},"output":{"args":{"filePath":"x.go"}}}` + "\n" +
			`{"v":1,"id":3,"hook":"chat.message","pid":1,"dir":"PROJ","input":{"sessionID":"o1"},"output":{"parts":[{"type":"text","text":"hi"}]}}`, []string{"hook", "--host", "opencode", "--serve"}},
		{``, []string{"hook", "--host", "claude", "--serve"}},
		{``, []string{"hook", "--host", "nope"}},
		{``, []string{"hook", "--frob"}},
		{``, []string{"hook", "a", "b"}},
		{``, []string{"hook", "--help"}},
		{`{"cwd":"PROJ","workspace":{"project_dir":"PROJ"}}`, []string{"statusline", "--managed"}},
		{``, []string{"statusline"}},
		{``, []string{"version"}},
		{``, []string{"version", "--json"}},
		{``, []string{"version", "--project", "PROJ"}},
		{``, []string{"version", "extra"}},
		{``, []string{"--project", "PROJ", "version"}},
		{``, []string{"config", "keys"}},
		{``, []string{"frob"}},
		{``, nil},
	}
	var got [2][]result
	for i, bin := range []string{front, full} {
		proj, home := t.TempDir(), t.TempDir()
		if err := os.Mkdir(filepath.Join(proj, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			args := make([]string, len(s.args))
			for j, a := range s.args {
				args[j] = strings.ReplaceAll(a, "PROJ", proj)
			}
			r := run(t, bin, proj, env(t, home), strings.ReplaceAll(s.stdin, "PROJ", proj), args...)
			for _, p := range []*string{&r.stdout, &r.stderr} {
				*p = strings.ReplaceAll(*p, proj, "PROJ")
			}
			got[i] = append(got[i], r)
		}
	}
	for i, s := range steps {
		if got[0][i] != got[1][i] {
			t.Errorf("nexus %s: the front and nexus-full differ:\nfront: %+v\nfull:  %+v", strings.Join(s.args, " "), got[0][i], got[1][i])
		}
	}
	// OpenCode's long-lived child answered both requests (through
	// nexus-full, which the front hands it to).
	for i, st := range steps {
		if strings.Join(st.args, " ") == "hook --host opencode --serve" &&
			(!strings.Contains(got[0][i].stdout, `"id":2`) || !strings.Contains(got[0][i].stdout, `"id":3`)) {
			t.Errorf("hook --host opencode --serve through the front answered %q", got[0][i].stdout)
		}
	}
	// The session did something: the checks above compare real replies.
	if !strings.Contains(got[0][0].stdout, "nexus is active for this project") || !strings.Contains(got[0][3].stdout, `"deny"`) {
		t.Errorf("the session's replies are not what a session gets:\n%+v", got[0][:4])
	}
}

// TestFrontWithoutFull: the front runs the hot commands itself once the
// configuration of their inputs is resolved (nexus-full keeps each
// resolution it makes: config.Options.Cache), so with no nexus-full beside
// it nor on PATH they still run then, while every other command, and a hot
// command whose configuration changed, says what is missing.
func TestFrontWithoutFull(t *testing.T) {
	src := commands.Path(t, "./cmd/nexus")
	bin := filepath.Join(t.TempDir(), "nexus")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	home, proj := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := append([]string{"PATH=" + t.TempDir()}, env(t, home)[1:]...)
	missing := "nexus-full is not installed in " + filepath.Dir(bin) + " nor on PATH"
	// Nothing resolved yet: even version needs nexus-full.
	if r := run(t, bin, proj, e, "", "version"); r.code != 1 || !strings.Contains(r.stderr, missing) {
		t.Fatalf("version, nothing resolved, without nexus-full: %+v", r)
	}
	// The installed pair resolves (nexus-full keeps the resolution).
	if r := run(t, src, proj, e, "", "version"); r.code != 0 {
		t.Fatalf("version with nexus-full: %+v", r)
	}
	if r := run(t, bin, proj, e, "", "version"); r.code != 0 || !strings.Contains(r.stdout, "distribution: nexus-core") {
		t.Errorf("version without nexus-full, resolved: %+v", r)
	}
	hook := `{"hook_event_name":"SessionStart","cwd":"` + proj + `","session_id":"s"}`
	if r := run(t, bin, proj, e, hook, "hook", "--host", "claude"); r.code != 0 || !strings.Contains(r.stdout, "nexus is active for this project") {
		t.Errorf("SessionStart without nexus-full, resolved: %+v", r)
	}
	// Codex's hooks too (its setup, which the front does not link, is not
	// needed to answer one).
	codexHook := `{"cwd":"` + proj + `","hook_event_name":"SessionStart","model":"gpt-5.5","session_id":"c","source":"startup","transcript_path":"/tmp/r.jsonl"}`
	if r := run(t, bin, proj, e, codexHook, "hook", "--host", "codex"); r.code != 0 || !strings.Contains(r.stdout, "nexus is active for this project") {
		t.Errorf("Codex SessionStart without nexus-full, resolved: %+v", r)
	}
	// OpenCode's long-lived child is nexus-full's to serve, resolved or not.
	if r := run(t, bin, proj, e, "", "hook", "--host", "opencode", "--serve"); r.code != 1 || !strings.Contains(r.stderr, missing) {
		t.Errorf("hook --host opencode --serve without nexus-full: %+v", r)
	}
	// Another input (a project file): nexus-full must resolve it.
	if err := os.WriteFile(filepath.Join(proj, ".nexus", "nexus.yaml"), []byte("log:\n  level: debug\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, bin, proj, e, hook, "hook", "--host", "claude"); r.code != 1 || !strings.Contains(r.stderr, missing) || r.stdout != "" {
		t.Errorf("SessionStart after the project file changed, without nexus-full: %+v", r)
	}
	if r := run(t, bin, proj, e, "", "config", "keys"); r.code != 1 || !strings.Contains(r.stderr, missing) {
		t.Errorf("config keys without nexus-full: %+v", r)
	}
}

// TestFrontRefusesOtherFull: nexus hands its build to nexus-full, which
// refuses to run for a front of another build (an older nexus-full left on
// PATH, a half-finished install) with an error saying how to fix it, and
// runs for its own.
func TestFrontRefusesOtherFull(t *testing.T) {
	front := commands.Path(t, "./cmd/nexus")
	full := filepath.Join(filepath.Dir(front), "nexus-full")
	home, proj := t.TempDir(), t.TempDir()
	e := env(t, home)
	// The installed pair: the front's build is nexus-full's.
	if r := run(t, front, proj, e, "", "config", "keys"); r.code != 0 || r.stderr != "" {
		t.Fatalf("config keys through the front: %+v", r)
	}
	// A front of another build, as nexus-full sees it.
	r := run(t, full, proj, append(e, "NEXUS_FRONT_BUILD=0.0.1 deadbeef"), "", "config", "keys")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, `nexus (build "0.0.1 deadbeef") found nexus-full`) ||
		!strings.Contains(r.stderr, "must be installed together; reinstall both (make install") {
		t.Errorf("nexus-full for a front of another build: %+v", r)
	}
}

// TestOnlyHotCommandsKeepResolutions: a command the front hands to
// nexus-full (config show here; install --dry-run alike) leaves the
// user's cache folder as it is; a hot command run there keeps the
// resolution the front will read.
func TestOnlyHotCommandsKeepResolutions(t *testing.T) {
	front := commands.Path(t, "./cmd/nexus")
	home, proj := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := env(t, home)
	cache := filepath.Join(home, ".cache", "nexus", "config")
	if r := run(t, front, proj, e, "", "config", "show"); r.code != 0 {
		t.Fatalf("config show: %+v", r)
	}
	if _, err := os.Stat(cache); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("config show wrote the cache folder %s (%v)", cache, err)
	}
	if r := run(t, front, proj, e, "", "version"); r.code != 0 {
		t.Fatalf("version: %+v", r)
	}
	if entries, err := os.ReadDir(cache); err != nil || len(entries) != 1 {
		t.Fatalf("after version, the cache folder holds %d files (%v)", len(entries), err)
	}
}
