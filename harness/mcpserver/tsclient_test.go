package mcpserver

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/filelock"
	"github.com/nexus-harness/nexus/internal/testenv"
)

// The official MCP TypeScript SDK is an independent client: if it can
// connect, list and call, hosts built on it can too.

const tsClientDir = "testdata/ts-client"

// tsClient installs the pinned SDK (npm ci from the committed lock file)
// into a cache folder keyed by the lock file's hash, so it is fetched once
// per machine, and returns the path of the runnable client script.
func tsClient(t *testing.T) string {
	t.Helper()
	_, nodeErr := exec.LookPath("node")
	_, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		t.Skip("node and npm are needed for the MCP TypeScript SDK test and are not on PATH")
	}
	pkg, err := os.ReadFile(filepath.Join(tsClientDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile(filepath.Join(tsClientDir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(append([]byte{}, pkg...), lock...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "nexus-tests", "ts-client-"+hex.EncodeToString(sum[:6]))
	l, err := filelock.AcquirePath(context.Background(), dir+".lock", 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	marker := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
	if _, err := os.Stat(marker); err != nil {
		os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o644)
		os.WriteFile(filepath.Join(dir, "package-lock.json"), lock, 0o644)
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			t.Fatalf("npm ci of @modelcontextprotocol/sdk failed (is the npm registry reachable?): %v\n%s", err, out)
		}
	}
	script, err := os.ReadFile(filepath.Join(tsClientDir, "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	// The script sits beside node_modules so its imports resolve there.
	scriptSum := sha256.Sum256(script)
	dst := filepath.Join(dir, "client-"+hex.EncodeToString(scriptSum[:4])+".mjs")
	if err := os.WriteFile(dst, script, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// buildNexus builds the real binary.
func buildNexus(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "nexus")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/nexus")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
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

func TestTypeScriptSDK(t *testing.T) {
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
