package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/goldens"
)

var testNow = time.Date(2026, 4, 16, 10, 22, 3, 0, time.UTC)

type env struct {
	home, repo string
}

func newEnv(t *testing.T) env {
	return env{home: t.TempDir(), repo: t.TempDir()}
}

func (e env) run(t *testing.T, frontmatter string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := NewCommand(Options{Stdout: &out, Stderr: &errb, Dir: e.repo, Home: e.home, Frontmatter: frontmatter,
		Getenv: func(string) string { return "" }, Now: func() time.Time { return testNow }})
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errb.String(), err
}

func exitCode(err error) int {
	var ee *ExitError
	if err == nil {
		return 0
	}
	if errors.As(err, &ee) {
		return ee.Code
	}
	return -1
}

// seed initialises a project and copies the golden "main" corpus into it.
func seed(t *testing.T, e env) string {
	t.Helper()
	out, _, err := e.run(t, "", "init", "Ledgerly")
	if err != nil {
		t.Fatalf("init: %v", err)
	}
	var storeDir string
	for _, line := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(line, "Store: "); ok {
			storeDir = s
		}
	}
	var corpora struct {
		Corpora map[string][]struct{ Stem, Markdown string } `json:"corpora"`
	}
	raw, err := os.ReadFile(filepath.Join(goldens.Dir(t), "check_decision_corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(raw, &corpora)
	for _, d := range corpora.Corpora["main"] {
		os.WriteFile(filepath.Join(storeDir, "decisions", d.Stem+".md"), []byte(d.Markdown), 0o644)
	}
	return storeDir
}

func TestCheckJSONMatchesGolden(t *testing.T) {
	e := newEnv(t)
	seed(t, e)
	var f struct {
		Cases []struct {
			ID       string  `json:"id"`
			Corpus   string  `json:"corpus"`
			Approach string  `json:"proposed_approach"`
			Context  *string `json:"context"`
			Expected struct {
				Related []struct {
					ID    string  `json:"id"`
					Score float64 `json:"score"`
				} `json:"related_decisions"`
				Raw []struct {
					RawScore float64 `json:"raw_score"`
				} `json:"raw_scores"`
				Assessment string `json:"assessment"`
				Error      *struct{ Reason string }
				Rendered   string     `json:"rendered"`
				TieGroups  [][]string `json:"tie_groups"`
			} `json:"expected"`
		} `json:"cases"`
	}
	raw, _ := os.ReadFile(filepath.Join(goldens.Dir(t), "check_decision_queries.json"))
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	for _, tc := range f.Cases {
		if tc.Corpus != "main" {
			continue
		}
		t.Run(tc.ID, func(t *testing.T) {
			args := []string{"check", "--json"}
			if tc.Context != nil {
				args = append(args, "--context", *tc.Context)
			}
			args = append(args, tc.Approach)
			out, _, err := e.run(t, "", args...)
			if tc.Expected.Error != nil {
				if exitCode(err) != 1 || err.Error() != tc.Expected.Error.Reason {
					t.Fatalf("over-length input: exit %d, %v", exitCode(err), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Related []struct {
					ID       string  `json:"id"`
					Score    float64 `json:"score"`
					RawScore float64 `json:"raw_score"`
				} `json:"related_decisions"`
				Assessment string `json:"assessment"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got.Assessment != tc.Expected.Assessment || len(got.Related) != len(tc.Expected.Related) {
				t.Fatalf("got %+v", got)
			}
			for i, h := range got.Related {
				if h.Score != tc.Expected.Related[i].Score || float32(h.RawScore) != float32(tc.Expected.Raw[i].RawScore) {
					t.Errorf("hit %d = %+v, want score %v raw %v", i, h, tc.Expected.Related[i].Score, tc.Expected.Raw[i].RawScore)
				}
				if len(tc.Expected.TieGroups) == 0 && h.ID != tc.Expected.Related[i].ID {
					t.Errorf("hit %d = %s, want %s", i, h.ID, tc.Expected.Related[i].ID)
				}
			}
			if len(tc.Expected.TieGroups) == 0 {
				// The command line prints the MCP answer in its own words
				// (wording.go): the same rows, CLI commands for MCP tools.
				text, _, err := e.run(t, "", append(args[:1:1], args[2:]...)...)
				if err != nil || text != cliText(tc.Expected.Rendered)+"\n" {
					t.Errorf("text output:\n%s\nwant\n%s", text, cliText(tc.Expected.Rendered))
				}
				assertNoMCPNames(t, text)
			}
		})
	}
}

func TestCommands(t *testing.T) {
	e := newEnv(t)
	storeDir := seed(t, e)
	good := filepath.Join(e.repo, "042-good.md")
	os.WriteFile(good, []byte("---\ndate: 2026-04-01\nconfidence: medium\n---\n\n# 042 \u2014 Use a shared helper\n\n## Decision\n\nExtract slug logic into one helper so both writers agree.\n"), 0o644)
	bad := filepath.Join(e.repo, "042-bad.md")
	os.WriteFile(bad, []byte("---\ndate: 2026-04-16\n---\n\n# 042 \u2014 A valid title\n\n## Decision\n\nA rationale that is long enough.\n"), 0o644)
	for _, tc := range []struct {
		name        string
		frontmatter string
		args        []string
		code        int
		contains    string
	}{
		{"format documented", "", []string{"format", good}, 0, "---\ndate: 2026-04-01\nversion: 1\nstatus: active\nconfidence: medium\n---\n\n# 042"},
		{"format reference flag", "", []string{"format", "--frontmatter", "reference", good}, 0, "superseded_by: null\n---"},
		{"format reference config", "reference", []string{"format", good}, 0, "files_affected: []\n"},
		{"format invalid", "", []string{"format", bad}, 1, ""},
		{"format bad mode", "", []string{"format", "--frontmatter", "fancy", good}, 2, ""},
		{"validate", "", []string{"validate", good, bad}, 1, "042-bad.md: confidence: Field required [field_missing]"},
		{"validate ok", "", []string{"validate", good}, 0, "042-good.md: ok"},
		{"show", "", []string{"show", "2"}, 0, "# 002 \u2014 Use PostgreSQL as the primary datastore"},
		{"show header", "", []string{"show", "--header", "D002"}, 0, "status: active"},
		{"show missing", "", []string{"show", "404"}, 1, ""},
		{"list", "", []string{"list", "--limit", "2"}, 0, "Decisions (2 total):"},
		{"search", "", []string{"search", "row-level security"}, 0, "D018"},
		{"search json", "", []string{"search", "--json", "row-level security"}, 0, `"number": 18`},
		{"check usage", "", []string{"check"}, 2, ""},
		{"check store flag", "", []string{"check", "--store", storeDir, "Use Pulumi instead of Terraform for infrastructure"}, 0, "D028"},
		{"propose", "", []string{"propose", "--title", "Adopt Mermaid for diagrams", "--rationale", "Diagrams live beside the prose as Mermaid markup.", "--rejected", "Draw.io: binary files nobody reviews"}, 0, "Recorded 063-adopt-mermaid-for-diagrams (add)"},
		{"propose duplicate", "", []string{"propose", "--title", "Adopt Mermaid for diagrams", "--rationale", "Diagrams live beside the prose as Mermaid markup."}, 1, ""},
		{"propose update", "", []string{"propose", "--operation", "update", "--affected", "decision-063", "--rationale", "Also used for sequence diagrams in RFCs."}, 0, "Recorded 063-adopt-mermaid-for-diagrams (update)"},
		{"propose update needs id", "", []string{"propose", "--operation", "update", "--rationale", "Also used for sequence diagrams in RFCs."}, 2, ""},
		// The command line speaks its own commands, never the MCP tools
		// (issue 26), and a flag outside its values is a usage error.
		{"search names the query", "", []string{"search", "--limit", "1", "row-level security"}, 0, `Found 1 match for "row-level security":`},
		{"search nothing", "", []string{"search", "zzqqxx"}, 0, `No matches for "zzqqxx".`},
		{"search blank", "", []string{"search", " "}, 1, "nexus decision search needs a non-empty query; `nexus decision list` lists every decision."},
		{"check one", "", []string{"check", "Use Pulumi instead of Terraform for infrastructure"}, 0, "before proposing."},
		{"propose duplicate says the flags", "", []string{"propose", "--title", "Adopt Mermaid for diagrams", "--rationale", "Sequence charts and flow charts are kept as text next to the docs."}, 1,
			"Use --operation supersede --affected ID to replace it, or --operation update --affected ID to append rationale"},
		{"propose update of metadata", "", []string{"propose", "--operation", "update", "--affected", "decision-063", "--rationale", "Also used for sequence diagrams in RFCs.", "--type", "pattern"}, 1,
			"--operation update appends rationale only"},
		{"propose unknown question", "", []string{"propose", "--title", "Pick a queue", "--rationale", "We need a queue for the billing jobs and webhooks.", "--resolves", "q99"}, 1,
			"--resolves names unknown question id(s)"},
		{"propose bad type", "", []string{"propose", "--title", "T", "--rationale", "long enough rationale text here", "--type", "foo"}, 2, `--type "foo": use one of architecture, api_design`},
		{"propose bad confidence", "", []string{"propose", "--title", "T", "--rationale", "long enough rationale text here", "--confidence", "sure"}, 2, "--confidence"},
		{"propose bad operation", "", []string{"propose", "--title", "T", "--rationale", "long enough rationale text here", "--operation", "replace"}, 2, "--operation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := e.run(t, tc.frontmatter, tc.args...)
			if got := exitCode(err); got != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s", got, err, tc.code, out)
			}
			text := out
			if err != nil {
				text += err.Error()
			}
			if !strings.Contains(text, tc.contains) {
				t.Errorf("output lacks %q:\n%s", tc.contains, text)
			}
			if !strings.Contains(strings.Join(tc.args, " "), "--json") {
				assertNoMCPNames(t, text)
			}
		})
	}
	text, err := os.ReadFile(filepath.Join(storeDir, "decisions", "063-adopt-mermaid-for-diagrams.md"))
	if err != nil || !strings.Contains(string(text), "version: 2") || !strings.Contains(string(text), "### Draw.io\n\nbinary files nobody reviews") {
		t.Errorf("written decision:\n%s (%v)", text, err)
	}
}

func TestNoStore(t *testing.T) {
	e := newEnv(t)
	_, _, err := e.run(t, "", "check", "anything")
	if exitCode(err) != 1 || !strings.Contains(err.Error(), "nexus decision init") {
		t.Fatalf("no store: %v", err)
	}
	// A flag outside its values is a usage error before anything is looked for.
	if _, _, err := e.run(t, "", "propose", "--title", "T", "--rationale", "long enough rationale text", "--type", "foo"); exitCode(err) != 2 {
		t.Errorf("--type foo without a store: %v", err)
	}
	if _, _, err := e.run(t, "", "init", "--store", "local-store", "Demo"); err != nil {
		t.Fatal(err)
	}
	out, _, err := e.run(t, "", "check", "--store", "local-store", "Scaffold the project store")
	if err != nil || !strings.HasPrefix(out, "No existing decisions to check against.") || !strings.Contains(out, "`nexus decision propose`") {
		t.Errorf("seed-only store: %q %v", out, err)
	}
	assertNoMCPNames(t, out)
}

// assertNoMCPNames fails when a text the command line printed names an
// MCP tool or its parameters instead of a command.
func assertNoMCPNames(t *testing.T, text string) {
	t.Helper()
	for _, n := range mcpNames {
		if strings.Contains(text, n) {
			t.Errorf("the command line's text names %q:\n%s", n, text)
		}
	}
}
