package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// runValidateBinary runs the built binary in an empty directory with no
// user configuration, so nothing but the arguments decides what it does.
func runValidateBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
	return runNexus(t, bin, t.TempDir(), env, "", args...)
}

var validateSummary = regexp.MustCompile(`^(\d+) errors?, (\d+) warnings? in (\d+) files?$`)

func validateSummaryOf(t *testing.T, out string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	m := validateSummary.FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		t.Fatalf("no summary line in:\n%s", out)
	}
	return m
}

func copyCoreTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "core")
	testenv.CopyTree(t, src, dst)
	return dst
}

// TestValidateCommand runs the real binary: the shared 0.10.0 distribution
// passes, and each kind of failure gets its exit status.
func TestValidateCommand(t *testing.T) {
	bin := nexusAlone(t)
	t.Run("clean", func(t *testing.T) { testValidateClean(t, bin) })
	t.Run("exit codes", func(t *testing.T) { testValidateExitCodes(t, bin) })
}

func testValidateClean(t *testing.T, bin string) {
	core := testenv.CoreDir(t)
	out, stderr, code := runValidateBinary(t, bin, "validate", "--core", core)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	if m := validateSummaryOf(t, out); m[1] != "0" || m[3] == "0" {
		t.Fatalf("summary %q", m[0])
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "error: ") {
			t.Errorf("error line %q", line)
		}
	}

	out, _, code = runValidateBinary(t, bin, "validate", "--core", core, "--json")
	var doc struct {
		Dir      string            `json:"dir"`
		Version  string            `json:"nexus_core_version"`
		Errors   int               `json:"errors"`
		Warnings int               `json:"warnings"`
		Files    int               `json:"files"`
		Findings []json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if doc.Dir != core || doc.Version != "0.10.0" || doc.Errors != 0 || len(doc.Findings) != doc.Warnings || doc.Files == 0 {
		t.Fatalf("document %+v", doc)
	}
}

func testValidateExitCodes(t *testing.T, bin string) {
	core := testenv.CoreDir(t)

	broken := copyCoreTree(t, core)
	meta := filepath.Join(broken, "agents", "engineer", "meta.yml")
	b, _ := os.ReadFile(meta)
	os.WriteFile(meta, bytes.Replace(b, []byte("category: do\n"), []byte("category: doo\n"), 1), 0o644)

	future := t.TempDir()
	os.MkdirAll(filepath.Join(future, "assets"), 0o755)
	os.WriteFile(filepath.Join(future, "package.json"), []byte(`{"name":"@moreih29/nexus-core","version":"0.13.2"}`), 0o644)

	tests := []struct {
		name     string
		args     []string
		code     int
		contains string // in stdout for findings, stderr otherwise
	}{
		{"finding", []string{"validate", "--core", broken}, 1, "error: agents/engineer/meta.yml:6:1: $.category: value must be one of"},
		{"version gate", []string{"validate", "--core", future}, 1, "(version 0.13.2) is not supported"},
		{"argument", []string{"validate", core}, 2, "validate takes no arguments"},
		{"unknown flag", []string{"validate", "--strict"}, 2, "unknown flag: --strict"},
		{"core not found", []string{"validate", "--core", filepath.Join(future, "nowhere")}, 2, "is not usable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := runValidateBinary(t, bin, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, stderr)
			}
			where := stderr
			if tt.code == 1 {
				where = out
				if m := validateSummaryOf(t, out); m[1] == "0" {
					t.Fatalf("exit 1 with summary %q", m[0])
				}
			}
			if !strings.Contains(where, tt.contains) {
				t.Fatalf("output lacks %q:\nstdout:\n%s\nstderr:\n%s", tt.contains, out, stderr)
			}
		})
	}
}
