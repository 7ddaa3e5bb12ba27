//go:build e2e

package mcpserver

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// The official MCP TypeScript SDK is an independent client: if it can
// connect, list and call, hosts built on it can too.

// tsClient returns the client script that scripts/e2e/setup.d installed
// beside the pinned SDK (npm ci from scripts/e2e/mcp-ts-client's lock
// file). The test fails, never skips, when it is missing.
func tsClient(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not on PATH: install Node.js 20+ (make e2e needs it)")
	}
	dir := filepath.Join(testenv.ModuleRoot(t), ".e2e", "mcp-ts-client")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the pinned MCP TypeScript SDK is not installed (%v): run `make e2e` or scripts/e2e/setup.d/10-mcp-ts-client.sh", err)
	}
	return filepath.Join(dir, "client.mjs")
}

type tsReport struct {
	Connected bool   `json:"connected"`
	Error     string `json:"error"`
	Code      any    `json:"code"`
	Tools     []struct {
		Name        string         `json:"name"`
		Annotations map[string]any `json:"annotations"`
		Required    []string       `json:"required"`
	} `json:"tools"`
	PlanStart, TaskAdd, BadCall struct {
		IsError    bool           `json:"isError"`
		Text       string         `json:"text"`
		Structured map[string]any `json:"structured"`
	}
}

func runTSClient(t *testing.T, dir string, env []string, args ...string) tsReport {
	t.Helper()
	cmd := exec.Command("node", args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %v: %v\n%s", args, err, stderr.String())
	}
	var r tsReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("client report %q: %v\nstderr: %s", out, err, stderr.String())
	}
	return r
}

func checkTSReport(t *testing.T, r tsReport) {
	t.Helper()
	if !r.Connected || r.Error != "" {
		t.Fatalf("the TypeScript SDK could not talk to nexus: %s", r.Error)
	}
	want := []string{"nx_artifact_write", "nx_context", "nx_history_search", "nx_plan_decide", "nx_plan_start", "nx_plan_status", "nx_plan_update", "nx_task_add", "nx_task_close", "nx_task_list", "nx_task_update"}
	// The 11 nexus-core tools must all be there; memory and plugin tools
	// registered by nexus mcp may come on top.
	got := map[string]bool{}
	for _, tool := range r.Tools {
		got[tool.Name] = true
		if !strings.HasPrefix(tool.Name, "nx_") || len(tool.Annotations) < 4 {
			t.Errorf("%s: name or annotations %v", tool.Name, tool.Annotations)
		}
	}
	for _, name := range want {
		if !got[name] {
			t.Errorf("tools/list lacks %s (got %v)", name, got)
		}
	}
	if r.PlanStart.IsError || r.PlanStart.Structured["created"] != true || r.PlanStart.Structured["plan_id"] != 1.0 {
		t.Errorf("nx_plan_start: %+v", r.PlanStart)
	}
	task, _ := r.TaskAdd.Structured["task"].(map[string]any)
	if r.TaskAdd.IsError || task["id"] != 1.0 || task["status"] != "pending" {
		t.Errorf("nx_task_add: %+v", r.TaskAdd)
	}
	if !r.BadCall.IsError || r.BadCall.Text != `{"error":"Task id 99 not found"}` {
		t.Errorf("nx_task_update 99: %+v", r.BadCall)
	}
}

func TestE2ETypeScriptSDK(t *testing.T) {
	script := tsClient(t)
	bin := buildNexus(t)
	home := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"NEXUS_CORE_DIR=" + testenv.CoreDir(t),
		"NEXUS_MCP_TOKEN_FILE=" + filepath.Join(home, "mcp-token"),
		// The client checks the nexus-core tool surface; the bundled
		// decision store would join it whenever a nexus-plugins binary
		// happens to be on PATH.
		"NEXUS_DECISIONS_ENABLED=false",
	}

	t.Run("stdio", func(t *testing.T) {
		proj := t.TempDir()
		checkTSReport(t, runTSClient(t, proj, env, script, "stdio", bin, "mcp"))
		for _, f := range []string{".nexus/state/plan.json", ".nexus/state/tasks.json"} {
			if _, err := os.Stat(filepath.Join(proj, f)); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	})

	t.Run("http", func(t *testing.T) {
		proj := t.TempDir()
		cmd := exec.Command(bin, "mcp", "--http", "127.0.0.1:0")
		cmd.Dir, cmd.Env = proj, env
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		url := awaitServing(t, stderr)
		tok, err := os.ReadFile(filepath.Join(home, "mcp-token"))
		if err != nil {
			t.Fatal(err)
		}
		checkTSReport(t, runTSClient(t, proj, env, script, "http", url, strings.TrimSpace(string(tok))))

		denied := runTSClient(t, proj, env, script, "http", url, "-")
		if denied.Connected || denied.Code != 401.0 {
			t.Fatalf("without the token: connected=%v code=%v error=%s; want a 401", denied.Connected, denied.Code, denied.Error)
		}
		if _, err := os.Stat(filepath.Join(proj, ".nexus/state/tasks.json")); err != nil {
			t.Fatal(err)
		}
	})
}

var servingRE = regexp.MustCompile(`at (http://\S+)`)

func awaitServing(t *testing.T, stderr io.Reader) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
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
