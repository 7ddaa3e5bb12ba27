package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// isolatedEnv is an environment with no user config and the test core.
func isolatedEnv(t *testing.T, home string, extra ...string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"NEXUS_CORE_DIR=" + testenv.CoreDir(t),
	}
	return append(env, extra...)
}

func rpc(id int, method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b) + "\n"
}

func toolCall(id int, name string, args any) string {
	return rpc(id, "tools/call", map[string]any{"name": name, "arguments": args})
}

// TestMCPBinary drives the built `nexus` the way hosts and simple clients
// do: a batch piped from a file, other .nexus roots, HTTP with a token, and
// `nexus state repair`.
func TestMCPBinary(t *testing.T) {
	bin := buildNexus(t, t.TempDir())

	t.Run("piped batch", func(t *testing.T) {
		home, proj := t.TempDir(), t.TempDir()
		var batch strings.Builder
		batch.WriteString(rpc(1, "initialize", map[string]any{"protocolVersion": "2024-11-05", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "batch", "version": "0"}}))
		batch.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
		batch.WriteString(rpc(2, "tools/list", nil))
		batch.WriteString(toolCall(3, "nx_plan_start", map[string]any{"topic": "t", "issues": []any{"a", "b"}, "research_summary": "r"}))
		batch.WriteString(toolCall(4, "nx_plan_decide", map[string]any{"issue_id": "1", "summary": "yes"}))
		n := 5
		for i := 0; i < 20; i++ {
			batch.WriteString(toolCall(n, "nx_task_add", map[string]any{"title": fmt.Sprint("task ", i), "context": "c"}))
			n++
		}
		batch.WriteString(toolCall(n, "nx_task_update", map[string]any{"id": 99, "status": "completed"}))
		n++
		batch.WriteString(toolCall(n, "nx_task_list", nil))
		file := filepath.Join(t.TempDir(), "batch.jsonl")
		if err := os.WriteFile(file, []byte(batch.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		in, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		cmd := exec.Command(bin, "mcp")
		cmd.Dir = proj
		cmd.Env = isolatedEnv(t, home)
		cmd.Stdin = in
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("nexus mcp: %v\n%s", err, stderr.String())
		}
		if stderr.Len() != 0 {
			t.Errorf("unexpected stderr: %s", stderr.String())
		}
		lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
		if len(lines) != n { // every request (ids 1..n), not the notification
			t.Fatalf("%d answers, want %d", len(lines), n)
		}
		var last map[string]any
		for i, line := range lines {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("stdout line %d is not a JSON-RPC message: %q", i, line)
			}
			if m["id"] != float64(i+1) {
				t.Fatalf("answer %d has id %v: answers must keep request order", i, m["id"])
			}
			last = m
		}
		if !strings.Contains(lines[0], `"protocolVersion":"2024-11-05"`) {
			t.Errorf("initialize: %s", lines[0])
		}
		if !strings.Contains(lines[len(lines)-2], `"isError":true`) || !strings.Contains(lines[len(lines)-2], `Task id 99 not found`) {
			t.Errorf("task_update 99: %s", lines[len(lines)-2])
		}
		summary := last["result"].(map[string]any)["structuredContent"].(map[string]any)["summary"].(map[string]any)
		if summary["total"] != 20.0 {
			t.Errorf("task list summary %v, want 20 tasks", summary)
		}
		if _, err := os.Stat(filepath.Join(proj, ".nexus/state/tasks.json")); err != nil {
			t.Errorf("tasks.json not in the project: %v", err)
		}
	})

	t.Run("other nexus roots", func(t *testing.T) {
		home, proj := t.TempDir(), t.TempDir()
		start := toolCall(1, "nx_plan_start", map[string]any{"topic": "t", "issues": []any{}, "research_summary": "r"})
		for _, tc := range []struct {
			args []string
			env  string
			root string
		}{
			{args: []string{"--nexus-root", "flag-root"}, root: filepath.Join(proj, "flag-root")},
			{env: "NEXUS_RUNTIME_ROOT=" + filepath.Join(proj, "env-root"), root: filepath.Join(proj, "env-root")},
			{args: []string{"--nexus-root", filepath.Join(proj, "both")}, env: "NEXUS_RUNTIME_ROOT=" + filepath.Join(proj, "loser"), root: filepath.Join(proj, "both")},
		} {
			cmd := exec.Command(bin, append([]string{"mcp"}, tc.args...)...)
			cmd.Dir = proj
			cmd.Env = isolatedEnv(t, home)
			if tc.env != "" {
				cmd.Env = append(cmd.Env, tc.env)
			}
			cmd.Stdin = strings.NewReader(start)
			out, err := cmd.Output()
			if err != nil || !strings.Contains(string(out), `\"created\":true`) {
				t.Fatalf("%v %s: %v %s", tc.args, tc.env, err, out)
			}
			if _, err := os.Stat(filepath.Join(tc.root, "state", "plan.json")); err != nil {
				t.Errorf("%v %s: plan.json not under %s", tc.args, tc.env, tc.root)
			}
		}
		if _, err := os.Stat(filepath.Join(proj, ".nexus")); err == nil {
			t.Error("the project's own .nexus was written")
		}
		if _, err := os.Stat(filepath.Join(proj, "loser")); err == nil {
			t.Error("--nexus-root did not override NEXUS_RUNTIME_ROOT")
		}
	})

	t.Run("http with a bearer token", func(t *testing.T) {
		home, proj := t.TempDir(), t.TempDir()
		tokenFile := filepath.Join(home, "tok")
		env := isolatedEnv(t, home, "NEXUS_MCP_TOKEN_FILE="+tokenFile)
		cmd := exec.Command(bin, "mcp", "--http", "127.0.0.1:0")
		cmd.Dir, cmd.Env = proj, env
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		url := waitForURL(t, stderr)

		tokCmd := exec.Command(bin, "mcp", "token")
		tokCmd.Dir, tokCmd.Env = proj, env
		out, err := tokCmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		token := strings.TrimSpace(string(out))
		if st, err := os.Stat(tokenFile); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("token file: %v %v", st, err)
		}
		init := rpc(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}})
		if code, _, _ := httpPost(t, url, "", "", init); code != http.StatusUnauthorized {
			t.Fatalf("without a token: %d, want 401", code)
		}
		code, body, session := httpPost(t, url, "Bearer "+token, "", init)
		if code != http.StatusOK || !strings.Contains(body, "protocolVersion") {
			t.Fatalf("with the token: %d %s", code, body)
		}
		if code, body, _ := httpPost(t, url, "Bearer "+token, session, toolCall(2, "nx_context", nil)); code != http.StatusOK || !strings.Contains(body, "activeMode") {
			t.Fatalf("tools/call: %d %s", code, body)
		}
		if code, _, _ := httpPost(t, url, "Bearer wrong", session, toolCall(3, "nx_context", nil)); code != http.StatusUnauthorized {
			t.Fatalf("wrong token with a valid session: %d, want 401", code)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("exit after SIGTERM: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("nexus mcp --http ignored SIGTERM")
		}
		if stdout.Len() != 0 {
			t.Errorf("HTTP mode printed to stdout: %s", stdout.String())
		}
	})

	t.Run("state repair", func(t *testing.T) {
		home, proj := t.TempDir(), t.TempDir()
		state := filepath.Join(proj, ".nexus", "state")
		os.MkdirAll(state, 0o755)
		os.WriteFile(filepath.Join(state, "plan.json"), []byte(`{"id": 0}`), 0o644)
		os.WriteFile(filepath.Join(state, "tasks.json"), []byte(`{"goal":"g","decisions":[],"tasks":[]}`), 0o644)
		cmd := exec.Command(bin, "state", "repair")
		cmd.Dir, cmd.Env = proj, isolatedEnv(t, home)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v %s", err, out)
		}
		if !regexp.MustCompile(`moved .*plan\.json -> .*plan\.json\.corrupt-\d{8}T\d{6}Z \(does not match its schema`).Match(out) {
			t.Fatalf("output: %s", out)
		}
		if _, err := os.Stat(filepath.Join(state, "plan.json")); err == nil {
			t.Fatal("corrupt plan.json still in place")
		}
		if _, err := os.Stat(filepath.Join(state, "tasks.json")); err != nil {
			t.Fatal("the healthy tasks.json was moved")
		}
		cmd = exec.Command(bin, "state", "repair", "--json")
		cmd.Dir, cmd.Env = proj, isolatedEnv(t, home)
		if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != `{
  "moved": []
}` {
			t.Fatalf("second run: %v %s", err, out)
		}
	})

	// Issue 13.9 and 13.10: a project file cannot choose the address or the
	// token file (issue 26: the settings are left out with a warning, and
	// the server runs on what the user chose), and a bad address is
	// refused before any file is written.
	t.Run("the project cannot open the door", func(t *testing.T) {
		home, proj := t.TempDir(), t.TempDir()
		readme := filepath.Join(proj, "README.md")
		os.WriteFile(readme, []byte("a public file with more than sixteen characters\n"), 0o644)
		os.MkdirAll(filepath.Join(proj, ".nexus"), 0o755)
		os.WriteFile(filepath.Join(proj, ".nexus", "nexus.yaml"), []byte("mcp: {token_file: README.md, http_addr: \"0.0.0.0:0\"}\n"), 0o644)
		userTok := filepath.Join(home, "user-tok")
		os.MkdirAll(filepath.Join(home, ".config", "nexus"), 0o755)
		os.WriteFile(filepath.Join(home, ".config", "nexus", "config.yaml"), []byte("mcp:\n  http_addr: 127.0.0.1:0\n  token_file: "+userTok+"\n"), 0o644)
		cmd := exec.Command(bin, "mcp", "--http", "")
		cmd.Dir, cmd.Env = proj, isolatedEnv(t, home)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var logged bytes.Buffer
		url := waitForURLLogged(t, stderr, &logged)
		cmd.Process.Kill()
		cmd.Wait()
		if !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Errorf("served at %s: the project file chose the address", url)
		}
		for _, want := range []string{"warning", "mcp.http_addr", "mcp.token_file", "project"} {
			if !strings.Contains(logged.String(), want) {
				t.Errorf("stderr does not name %q:\n%s", want, logged.String())
			}
		}
		if st, err := os.Stat(readme); err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("README.md was touched: %v %v", st.Mode(), err)
		}
		if _, err := os.Stat(userTok); err != nil {
			t.Errorf("the user's token file was not used: %v", err)
		}

		proj = t.TempDir()
		token := filepath.Join(home, "tok")
		os.MkdirAll(filepath.Join(home, ".config", "nexus"), 0o755)
		os.WriteFile(filepath.Join(home, ".config", "nexus", "config.yaml"), []byte("mcp:\n  token_file: "+token+"\n"), 0o644)
		cmd = exec.Command(bin, "mcp", "--http", "notanaddr")
		cmd.Dir, cmd.Env = proj, isolatedEnv(t, home)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "port") {
			t.Fatalf("--http notanaddr: %v %s", err, out)
		}
		if _, err := os.Stat(token); err == nil {
			t.Error("the token file was written before the address was rejected")
		}
	})
}

var servingLine = regexp.MustCompile(`serving MCP over streamable HTTP at (http://\S+)`)

func waitForURL(t *testing.T, stderr io.Reader) string {
	t.Helper()
	return waitForURLLogged(t, stderr, nil)
}

// waitForURLLogged is waitForURL keeping the lines before the address in
// logged (when not nil).
func waitForURLLogged(t *testing.T, stderr io.Reader, logged *bytes.Buffer) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				logged = nil // the caller reads it from now on
				found <- m[1]
			} else if logged != nil {
				logged.WriteString(sc.Text() + "\n")
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(20 * time.Second):
		t.Fatal("nexus mcp --http did not report its address")
	}
	return ""
}

func httpPost(t *testing.T, url, auth, session, body string) (int, string, string) {
	t.Helper()
	r, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	if session != "" {
		r.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id")
}
