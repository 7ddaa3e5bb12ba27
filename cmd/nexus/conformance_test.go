package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
)

var summaryLine = regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\n\z`)

func TestConformanceCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the nexus binary")
	}
	bin := buildNexus(t, t.TempDir())
	env := isolatedEnv(t, t.TempDir())
	core := testenv.CoreDir(t)
	testdata := filepath.Join(testenv.ModuleRoot(t), "conformance", "testdata")

	t.Run("in-process suite passes", func(t *testing.T) {
		out, errOut, code := runNexus(t, bin, t.TempDir(), env, "", "conformance", "--core", core)
		if code != 0 || !strings.HasSuffix(out, "\n46 passed, 0 failed\n") {
			t.Fatalf("want all 46 cases of nexus-core 0.10.0 (tool, lifecycle, scenario) to pass; exit %d\n%s\n%s", code, out, errOut)
		}
		if n := strings.Count("\n"+out, "\nPASS  "); n != 46 {
			t.Fatalf("%d PASS lines, want one per case:\n%s", n, out)
		}
	})

	t.Run("tool cases pass against nexus mcp", func(t *testing.T) {
		out, errOut, code := runNexus(t, bin, t.TempDir(), env, "", "conformance", "--core", core, "--target", bin, "mcp")
		m := summaryLine.FindStringSubmatch(out)
		if code != 0 || m == nil || m[1] != "43" || m[2] != "0" || m[3] != "3" {
			t.Fatalf("want 43 passed, 0 failed, 3 skipped (lifecycle); exit %d\n%s\n%s", code, out, errOut)
		}
	})

	t.Run("broken fixtures fail with exit 1, JSON and JUnit", func(t *testing.T) {
		junit := filepath.Join(t.TempDir(), "report.xml")
		out, errOut, code := runNexus(t, bin, t.TempDir(), env, "", "conformance", "--core", core, "--json",
			"--fixtures", filepath.Join(testdata, "broken"), "--run", "^broken_", "--junit", junit)
		if code != 1 {
			t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
		}
		var doc struct {
			Failed int `json:"failed"`
			Passed int `json:"passed"`
			Cases  []struct {
				ID       string `json:"test_id"`
				Status   string `json:"status"`
				Failures []struct {
					Path, Expected, Actual string
				} `json:"failures"`
			} `json:"cases"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("--json output: %v\n%s", err, out)
		}
		if doc.Failed != 8 || doc.Passed != 0 || len(doc.Cases) != 8 {
			t.Fatalf("report: %+v", doc)
		}
		x, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(x, []byte(`tests="8" failures="8"`)) || !bytes.Contains(x, []byte(`name="broken_wrong_expected_value"`)) {
			t.Fatalf("junit:\n%s", x)
		}
	})

	t.Run("text report names path, expected and actual", func(t *testing.T) {
		out, _, code := runNexus(t, bin, t.TempDir(), env, "", "conformance", "--core", core,
			"--fixtures", filepath.Join(testdata, "broken"), "--run", "broken_wrong_expected_value")
		want := "FAIL  broken_wrong_expected_value  return $.active: expected true, got false"
		if code != 1 || !strings.Contains(out, want) || !strings.HasSuffix(out, "0 passed, 1 failed\n") {
			t.Fatalf("exit %d\n%s", code, out)
		}
	})

	t.Run("scenarios", func(t *testing.T) {
		out, errOut, code := runNexus(t, bin, t.TempDir(), env, "", "conformance", "--core", core,
			"--fixtures", filepath.Join(testdata, "scenarios"), "--run", "^scenario_")
		m := summaryLine.FindStringSubmatch(out)
		if code != 0 || m == nil || m[2] != "0" {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
	})

	t.Run("every case against nexus mcp and nexus hook", func(t *testing.T) {
		out, errOut, code := runNexus(t, bin, t.TempDir(), env, "", "conformance", "--core", core, "--target", bin+" mcp", "--hook-target", bin+" hook --host claude")
		if code != 0 || !strings.HasSuffix(out, "\n46 passed, 0 failed\n") || strings.Contains(out, "SKIP") {
			t.Fatalf("want 46 passed (43 over MCP, 3 through the hook); exit %d\n%s\n%s", code, out, errOut)
		}
		out, errOut, code = runNexus(t, bin, t.TempDir(), env, "", "conformance", "--core", core, "--hook-target", bin+" hook --host neutral", "--hook-protocol", "neutral")
		if m := summaryLine.FindStringSubmatch(out); code != 0 || m == nil || m[1] != "3" || m[2] != "0" || m[3] != "43" {
			t.Fatalf("hooks alone (neutral): want the 3 lifecycle cases passed, 43 skipped; exit %d\n%s\n%s", code, out, errOut)
		}
	})

	t.Run("comparison of harnesses", func(t *testing.T) {
		junit := filepath.Join(t.TempDir(), "report.xml")
		out, errOut, code := runNexus(t, bin, t.TempDir(), env, "", "conformance", "--core", core, "--run", "^(plan_start_happy_path|agent_spawn)$", "--junit", junit,
			"--target", bin+" mcp", "--hook-target", bin+" hook --host claude",
			"--target", bin+" mcp", "--hook-target", bin+" no-such-command",
			"--target", "no-such-harness-binary", "--hook-target", bin+" hook")
		for _, want := range []string{
			"  A  " + bin + " mcp, hooks: " + bin + " hook --host claude (claude)\n",
			"test_id                A     B     C\n",
			"plan_start_happy_path  PASS  PASS  -\n",
			"agent_spawn            PASS  FAIL  -     B: ",
			"A: 2 passed, 0 failed in ",
			"B: 1 passed, 1 failed in ",
			"C: did not start: target command \"no-such-harness-binary\" not found",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("comparison lacks %q", want)
			}
		}
		if code != 1 || t.Failed() {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		x, err := os.ReadFile(junit)
		if err != nil || !bytes.Contains(x, []byte(`name="A: tools/plan-start.json"`)) || !bytes.Contains(x, []byte(`name="C: target"`)) {
			t.Fatalf("junit (%v):\n%s", err, x)
		}
		out, _, _ = runNexus(t, bin, t.TempDir(), env, "", "conformance", "--core", core, "--json", "--run", "^plan_start_happy_path$", "--target", bin+" mcp", "--target", "no-such-harness-binary")
		var doc struct {
			Harnesses []struct {
				Label      string `json:"label"`
				StartError string `json:"start_error"`
				Passed     int    `json:"passed"`
			} `json:"harnesses"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Harnesses) != 2 || doc.Harnesses[1].StartError == "" {
			t.Fatalf("--json comparison (%v):\n%s", err, out)
		}
	})

	t.Run("a target that does not start is one error", func(t *testing.T) {
		out, errOut, code := runNexus(t, bin, t.TempDir(), env, "", "conformance", "--core", core, "--target", "no-such-harness-binary")
		if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "did not start") {
			t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
		}
	})

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"prefix without target", []string{"--tool-prefix", "x_"}, "--tool-prefix only applies with --target"},
		{"hook targets do not pair", []string{"--target", "a", "--target", "b", "--hook-target", "c"}, "give one hook command per target"},
		{"protocol without hook target", []string{"--hook-protocol", "neutral"}, "--hook-protocol only applies with --hook-target"},
		{"unknown protocol", []string{"--hook-target", "x", "--hook-protocol", "cursor"}, "use claude or neutral"},
		{"arguments with two targets", []string{"--target", "a", "--target", "b", "mcp"}, "quote each command whole"},
		{"bad regexp", []string{"--run", "("}, "--run:"},
		{"nothing matches", []string{"--run", "^no_such_case$"}, "matches no test_id"},
		{"stray arguments", []string{"mcp"}, "unexpected arguments"},
		{"bad target quoting", []string{"--target", `"nexus mcp`}, "without closing quote"},
		{"missing fixtures dir", []string{"--fixtures", "/no/such/dir"}, "is not a directory"},
		{"bad harness id", []string{"--harness-id", "Claude_Nexus"}, "must match"},
	} {
		t.Run("usage: "+tc.name, func(t *testing.T) {
			out, errOut, code := runNexus(t, bin, t.TempDir(), env, "", append([]string{"conformance", "--core", core}, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q, want exit 2 mentioning %q\n%s", code, errOut, tc.want, out)
			}
		})
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		bad  bool
	}{
		{"nexus mcp", []string{"nexus", "mcp"}, false},
		{"  node  dist/server.js\t--stdio ", []string{"node", "dist/server.js", "--stdio"}, false},
		{`node "my server.js" 'a b' c\ d`, []string{"node", "my server.js", "a b", "c d"}, false},
		{`x "a\"b" 'c"d'`, []string{"x", `a"b`, `c"d`}, false},
		{`x ""`, []string{"x", ""}, false},
		{"", nil, false},
		{`x "open`, nil, true},
		{`x 'open`, nil, true},
		{`x \`, []string{"x", `\`}, false}, // as sh -c leaves it
		{`node $NEXUS_SPLIT_TEST/server.js`, []string{"node", "/opt/srv/server.js"}, false},
		{`node {a,b}.js`, []string{"node", "a.js", "b.js"}, false},
		{`node "$NEXUS_SPLIT_TEST"`, []string{"node", "/opt/srv"}, false},
		{`node '$NEXUS_SPLIT_TEST'`, []string{"node", "$NEXUS_SPLIT_TEST"}, false},
		{"a | b", nil, true},
		{"a; b", nil, true},
		{"a && b", nil, true},
		{"a > log", nil, true},
		{"a $(b)", nil, true},
		{"a `b`", nil, true},
	}
	t.Setenv("NEXUS_SPLIT_TEST", "/opt/srv")
	for _, tt := range tests {
		got, err := splitCommand(tt.in)
		if (err != nil) != tt.bad || !tt.bad && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

// TestBuiltinDistribution runs the commands with nothing configured: the
// distribution built into nexus is used, said so, and passes everything.
func TestBuiltinDistribution(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the nexus binary")
	}
	bin := buildNexus(t, t.TempDir())
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}

	out, errOut, code := runNexus(t, bin, t.TempDir(), env, "", "version")
	if code != 0 || !strings.Contains(out, "distribution: nexus-core 0.10.0, built-in nexus-core 0.10.0 (built in)") {
		t.Fatalf("version: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = runNexus(t, bin, t.TempDir(), append(env, "NEXUS_CORE_DIR="+testenv.CoreDir(t)), "", "version")
	if code != 0 || !strings.Contains(out, "distribution: nexus-core 0.10.0, "+testenv.CoreDir(t)+" (NEXUS_CORE_DIR)") {
		t.Fatalf("version with NEXUS_CORE_DIR: exit %d\n%s", code, out)
	}
	out, errOut, code = runNexus(t, bin, t.TempDir(), env, "", "validate")
	// The C8 preconditions are counted on the note line, not shown as
	// warnings (-v lists them).
	if code != 0 || !strings.HasSuffix(out, "0 errors, 0 warnings in 50 files\n") || !strings.Contains(out, "note: 3 known upstream deviations") || strings.Contains(out, "warning:") {
		t.Fatalf("validate: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runNexus(t, bin, t.TempDir(), env, "", "validate", "-v")
	if code != 0 || !strings.HasSuffix(out, "0 errors, 3 warnings in 50 files\n") {
		t.Fatalf("validate -v: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runNexus(t, bin, t.TempDir(), env, "", "conformance")
	if code != 0 || !strings.HasSuffix(out, "\n46 passed, 0 failed\n") {
		t.Fatalf("conformance: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runNexus(t, bin, t.TempDir(), env, "", "conformance", "--target", bin, "mcp")
	if m := summaryLine.FindStringSubmatch(out); code != 0 || m == nil || m[1] != "43" || m[2] != "0" || m[3] != "3" {
		t.Fatalf("conformance --target nexus mcp: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runNexus(t, bin, t.TempDir(), env, "", "tags", "explain", "[plan] add a cache")
	if code != 0 || !strings.Contains(out, "nx-plan") {
		t.Fatalf("tags explain: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = runNexus(t, bin, t.TempDir(), env, "", "doctor")
	if !strings.Contains(out, "nexus-core 0.10.0 in use: built-in nexus-core 0.10.0 (built in), valid") {
		t.Fatalf("doctor (exit %d) does not name the built-in distribution:\n%s", code, out)
	}
	// A skill's body and the agents come out of the binary too.
	proj := t.TempDir()
	prompt := `{"hook_event_name":"UserPromptSubmit","session_id":"s","cwd":"` + proj + `","prompt":"[plan] add a cache"}`
	out, errOut, code = runNexus(t, bin, proj, env, prompt, "hook", "--host", "claude")
	if code != 0 || errOut != "" || !strings.Contains(out, "nx-plan") {
		t.Fatalf("UserPromptSubmit [plan]: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runNexus(t, bin, proj, env, "", "--project", proj, "install", "claude", "--dry-run")
	if code != 0 || !strings.Contains(out, "architect") {
		t.Fatalf("install claude --dry-run (the agent catalog): exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runNexus(t, bin, proj, env, "", "core", "extract", filepath.Join(proj, "core"))
	if code != 0 || !strings.Contains(out, "files of nexus-core 0.10.0") {
		t.Fatalf("core extract: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runNexus(t, bin, proj, env, "", "validate", "-v", "--core", filepath.Join(proj, "core"))
	if code != 0 || !strings.HasSuffix(out, "0 errors, 3 warnings in 50 files\n") {
		t.Fatalf("validate of the extracted copy: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code = runNexus(t, bin, proj, env, "", "core", "extract", filepath.Join(proj, "core")); code != 1 || !strings.Contains(errOut, "--force") {
		t.Fatalf("a second extract must refuse: exit %d %s", code, errOut)
	}
}
