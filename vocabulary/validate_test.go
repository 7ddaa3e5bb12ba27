package vocabulary

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// copyCore copies the shared 0.10.0 distribution into a temp dir, so a test
// can corrupt it. Nothing of it is committed.
func copyCore(t testing.TB) string {
	t.Helper()
	src := testenv.CoreDir(t)
	dst := filepath.Join(t.TempDir(), "core")
	err := filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// Mutations used by the corruption table.

func replaceIn(rel, old, new string) func(testing.TB, string) {
	return func(t testing.TB, dir string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(old)) {
			t.Fatalf("%s does not contain %q", rel, old)
		}
		b = bytes.Replace(b, []byte(old), []byte(new), 1)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// replaceBlock replaces the first line equal to header and the more
// indented lines that follow it (a YAML block scalar) with text.
func replaceBlock(rel, header, text string) func(testing.TB, string) {
	return func(t testing.TB, dir string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		i := strings.Index(s, header)
		if i < 0 {
			t.Fatalf("%s has no line %q", rel, header)
		}
		indent := len(header) - len(strings.TrimLeft(header, " "))
		j := i + len(header)
		for j < len(s) {
			k := strings.IndexByte(s[j:], '\n')
			if k < 0 {
				k = len(s) - j - 1
			}
			line := s[j : j+k+1]
			if len(line)-len(strings.TrimLeft(line, " ")) <= indent && strings.TrimSpace(line) != "" {
				break
			}
			j += k + 1
		}
		if err := os.WriteFile(p, []byte(s[:i]+text+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func appendTo(rel, text string) func(testing.TB, string) {
	return func(t testing.TB, dir string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(rel)), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(rel, text string) func(testing.TB, string) {
	return func(t testing.TB, dir string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func removePath(rel string) func(testing.TB, string) {
	return func(t testing.TB, dir string) {
		t.Helper()
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
}

// editJSON rewrites a JSON file through edit (keys come out sorted).
func editJSON(rel string, edit func(v any) any) func(testing.TB, string) {
	return func(t testing.TB, dir string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		out, err := json.MarshalIndent(edit(v), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func all(ms ...func(testing.TB, string)) func(testing.TB, string) {
	return func(t testing.TB, dir string) {
		for _, m := range ms {
			m(t, dir)
		}
	}
}

// want is a finding a corrupted copy must produce.
type want struct {
	sev        Severity
	file, path string
	contains   string
}

var corruptions = []struct {
	name   string
	mutate func(testing.TB, string)
	wants  []want
}{
	{"required-key-removed", replaceIn("vocabulary/tags.yml",
		`    description: "Activates nx-plan skill for structured multi-perspective analysis and decision recording"`+"\n", ""),
		[]want{{SeverityError, "vocabulary/tags.yml", "$.tags[0]", "missing property 'description'"}}},
	{"enum-misspelled", replaceIn("agents/engineer/meta.yml", "category: do\n", "category: doo\n"),
		[]want{{SeverityError, "agents/engineer/meta.yml", "$.category", `value must be one of 'how', 'do', 'check', found "doo"`}}},
	{"unknown-key", appendTo("skills/nx-plan/meta.yml", "colour: red\n"),
		[]want{{SeverityError, "skills/nx-plan/meta.yml", "$.colour", "'colour' not allowed"}}},
	{"prose-guidance-short", replaceBlock("vocabulary/capabilities.yml", "    prose_guidance: |\n", `    prose_guidance: "Too short."`+"\n"),
		[]want{{SeverityError, "vocabulary/capabilities.yml", "$.capabilities[0].prose_guidance", "minLength"}}},
	// 46 code points for the schema, 10 once trimmed: only G5′ sees it.
	{"prose-guidance-short-after-trim", replaceBlock("vocabulary/capabilities.yml", "    prose_guidance: |\n",
		`    prose_guidance: "Too short.\u3000                                    "`+"\n"),
		[]want{{SeverityError, "vocabulary/capabilities.yml", "$.capabilities[0].prose_guidance", "10 characters once trimmed, want at least 40"}}},
	{"invalid-yaml", appendTo("vocabulary/categories.yml", "  - id: [unclosed\n"),
		[]want{{SeverityError, "vocabulary/categories.yml", "$", "invalid YAML"}}},
	{"body-hash-mismatch", appendTo("agents/engineer/body.md", "\nOne more line.\n"),
		[]want{{SeverityError, "manifest.json", "$.agents[2].body_hash", "agents/engineer/body.md hashes to sha256:"}}},
	{"body-not-utf8", appendTo("skills/nx-run/body.md", "bad byte \xff here\n"),
		[]want{{SeverityError, "skills/nx-run/body.md", "$", "not valid UTF-8 (byte 0xff"}}},
	{"manifest-agent-missing", editJSON("manifest.json", func(v any) any {
		m := v.(map[string]any)
		agents := m["agents"].([]any)
		m["agents"] = append(agents[:2:2], agents[3:]...) // drop engineer
		return m
	}), []want{{SeverityError, "manifest.json", "$.agents", "agents/engineer/ is not listed in manifest.json"}}},
	{"agent-directory-missing", removePath("agents/engineer"),
		[]want{{SeverityError, "manifest.json", "$.agents[2].id", `agent "engineer" is listed in manifest.json but agents/engineer/ does not exist`}}},
	{"tag-skill-missing", replaceIn("vocabulary/tags.yml", "skill: nx-sync", "skill: nx-nope"),
		[]want{{SeverityError, "vocabulary/tags.yml", "$.tags[2].skill", `skills/nx-nope/ does not exist`},
			{SeverityError, "manifest.json", "$.vocabulary.tags[2].skill", `differs from vocabulary/tags.yml:24:5`}}},
	{"fixture-action-and-steps", replaceIn("conformance/tools/plan-start.json",
		`    "action": {`, `    "steps": [{"action": {"tool": "plan_status", "params": {}}}],
    "action": {`),
		[]want{{SeverityError, "conformance/tools/plan-start.json", "$[0]", "needs exactly one of action, event, steps; it has action and steps"}}},
	{"fixture-unknown-placeholder", replaceIn("conformance/lifecycle/agent-spawn.json", `"{STATE_ROOT}/{HARNESS_ID}/agent-tracker.json": {`, `"{STATE_ROOT}/{HARNESS}/agent-tracker.json": {`),
		[]want{{SeverityError, "conformance/lifecycle/agent-spawn.json", `$.postcondition.state_files["{STATE_ROOT}/{HARNESS}/agent-tracker.json"]`, "placeholder {HARNESS}"}}},
	{"fixture-duplicate-test-id", replaceIn("conformance/lifecycle/agent-resume.json", `"test_id": "agent_resume"`, `"test_id": "agent_complete"`),
		[]want{{SeverityError, "conformance/lifecycle/agent-resume.json", "$.test_id", `test_id "agent_complete" is already used at conformance/lifecycle/agent-complete.json:2`}}},
	{"fixture-not-json", writeFile("conformance/tools/broken.json", "[\n  {\"test_id\": \"x\",}\n]\n"),
		[]want{{SeverityError, "conformance/tools/broken.json", "$", "invalid JSON"}}},
	{"capability-unknown", replaceIn("agents/engineer/meta.yml", "  - no_task_create\n", "  - no_task_creation\n"),
		[]want{{SeverityError, "agents/engineer/meta.yml", "$.capabilities[0]", `capability "no_task_creation" is not defined`}}},
	{"skill-trigger-not-skill-tag", replaceIn("skills/nx-plan/meta.yml", "  - plan\n", "  - d\n"),
		[]want{{SeverityError, "skills/nx-plan/meta.yml", "$.triggers[0]", `trigger "d" is not the id of a tag of type skill`}}},
	{"tag-trigger-mismatch", replaceIn("vocabulary/tags.yml", `trigger: "[m:gc]"`, `trigger: "[m-gc]"`),
		[]want{{SeverityError, "vocabulary/tags.yml", "$.tags[5].trigger", `want "[m:gc]"`}}},
	{"duplicate-id", replaceIn("vocabulary/categories.yml", "  - id: check\n", "  - id: how\n"),
		[]want{{SeverityError, "vocabulary/categories.yml", "$.categories[2].id", `duplicate category id "how" (first at line 4)`}}},
	{"directory-extra-file", writeFile("agents/engineer/notes.txt", "notes\n"),
		[]want{{SeverityError, "agents/engineer/notes.txt", "$", "may hold only body.md and meta.yml"}}},
	{"directory-body-missing", removePath("skills/nx-init/body.md"),
		[]want{{SeverityError, "skills/nx-init/body.md", "$", "file is missing"}}},
	{"id-mismatch", replaceIn("agents/tester/meta.yml", "id: tester\n", "id: testers\n"),
		[]want{{SeverityError, "agents/tester/meta.yml", "$.id", `id "testers" does not match its directory name "tester"`}}},
	{"runtime-code", writeFile("lib/index.mjs", "export {}\n"),
		[]want{{SeverityError, "lib/index.mjs", "$", "runtime code"}}},
	{"harness-lint", all(
		appendTo("agents/architect/body.md", "Track work with TodoWrite, then call Agent(reviewer).\nInside a heredoc: >>NOTE\nGrep everything\n<<NOTE\n"),
		replaceIn("skills/nx-sync/meta.yml", "name: nx-sync", "name: nx-sync /claude-nexus:sync Read")),
		[]want{{SeverityError, "agents/architect/body.md", "$", `harness-specific tool name "TodoWrite"`},
			{SeverityError, "agents/architect/body.md", "$", `harness-specific call syntax "Agent("`},
			{SeverityError, "skills/nx-sync/meta.yml", "$.name", `slash-command namespace "/claude-nexus:"`},
			{SeverityError, "skills/nx-sync/meta.yml", "$.name", `harness tool name "Read"`}}},
	{"macro-unknown", appendTo("skills/nx-run/body.md", "{{spawn_agent role=engineer}}\n"),
		[]want{{SeverityWarning, "skills/nx-run/body.md", "$", "macro {{spawn_agent ...}} names no invocation"},
			{SeverityError, "manifest.json", "$.skills[0].body_hash", "skills/nx-run/body.md hashes to"}}},
	{"model-lint", replaceIn("agents/writer/meta.yml", "model_tier: standard", "model_tier: standard # like Sonnet"),
		[]want{{SeverityError, "agents/writer/meta.yml", "$.model_tier", `concrete model name "Sonnet"`}}},
	{"manifest-differs", replaceIn("manifest.json", `"resume_tier": "bounded"`, `"resume_tier": "persistent"`),
		[]want{{SeverityError, "manifest.json", "$.agents[2].resume_tier", `differs from agents/engineer/meta.yml:7:1 ($.resume_tier): manifest has "persistent", the source has "bounded"`}}},
	{"manifest-unknown-category", all(
		replaceIn("manifest.json", `"category": "do"`, `"category": "act"`)),
		[]want{{SeverityError, "manifest.json", "$.agents[2].category", `category "act" is not defined in manifest.json vocabulary.categories`}}},
	{"version-too-new", all(removePath("manifest.json"), removePath("vocabulary"), writeFile("assets/.keep", ""),
		writeFile("VERSION", "0.13.0\n")),
		[]want{{SeverityError, "manifest.json", "$", "(version 0.13.0) is not supported"}}},
	{"manifest-missing", removePath("manifest.json"),
		[]want{{SeverityError, "manifest.json", "$", "manifest.json is missing although VERSION says 0.10.0"}}},
	{"manifest-version-wrong-type", replaceIn("manifest.json", `"nexus_core_version": "0.10.0"`, `"nexus_core_version": 10`),
		[]want{{SeverityError, "manifest.json", "$.nexus_core_version", "got number, want string"}}},
	{"fallback-short-after-trim", replaceBlock("vocabulary/invocations.yml", "    fallback_behavior: |\n", "    fallback_behavior: \"  Re-emit the text.   \"\n"),
		[]want{{SeverityError, "vocabulary/invocations.yml", "$.invocations[0].fallback_behavior", "fallback_behavior is 17 characters once trimmed, want at least 20"}}},
	{"runtime-code-in-scripts-allowed", all(writeFile("scripts/build.ts", "export {}\n"), writeFile("node_modules/x/index.js", "\n")), nil},
	{"agents-holds-a-file", writeFile("agents/README.md", "# agents\n"),
		[]want{{SeverityError, "agents/README.md", "$", "agents/ may hold only one directory per agent"}}},
	{"directory-not-kebab", all(
		func(t testing.TB, dir string) {
			if err := os.Rename(filepath.Join(dir, "agents", "writer"), filepath.Join(dir, "agents", "Writer")); err != nil {
				t.Fatal(err)
			}
		}),
		[]want{{SeverityError, "agents/Writer/meta.yml", "$", `directory name "Writer" is not kebab-case`},
			{SeverityError, "agents/Writer/meta.yml", "$.id", `id "writer" does not match its directory name "Writer"`},
			{SeverityError, "manifest.json", "$.agents[8].id", "agents/writer/ does not exist"}}},
	{"fixture-unknown-tool", replaceIn("conformance/tools/plan-status.json", `"tool": "plan_status",`, `"tool": "nx_plan_status",`),
		[]want{{SeverityWarning, "conformance/tools/plan-status.json", "$[0].action.tool", `tool "nx_plan_status" is not one of the eleven nexus-core tools`}}},
	{"fixture-step-without-action", replaceIn("conformance/tools/plan-start.json",
		`    "action": {`, `    "steps": [{"description": "nothing to do"}],
    "action_x": {`),
		[]want{{SeverityError, "conformance/tools/plan-start.json", "$[0].steps[0]", "a step needs exactly one of action, event; it has none"},
			{SeverityError, "conformance/tools/plan-start.json", "$[0].action_x", "additional properties 'action_x' not allowed"}}},
	{"version-too-old", replaceIn("manifest.json", `"nexus_core_version": "0.10.0"`, `"nexus_core_version": "0.9.4"`),
		[]want{{SeverityError, "manifest.json", "$.nexus_core_version", ">=0.10.0 <0.13.0"}}},
	{"version-0.12-accepted", all(
		replaceIn("manifest.json", `"nexus_core_version": "0.10.0"`, `"nexus_core_version": "0.12.0"`),
		writeFile("VERSION", "0.12.0\n")),
		[]want{{SeverityWarning, "manifest.json", "$.nexus_core_version", "nexus-core 0.12.0 is accepted"}}},
}

func TestValidateClean(t *testing.T) {
	dir := testenv.CoreDir(t)
	r := Validate(dir, schema.NewCoreSet(dir))
	if r.Errors != 0 {
		var b strings.Builder
		r.WriteText(&b)
		t.Fatalf("the 0.10.0 distribution should pass:\n%s", b.String())
	}
	if r.Version != "0.10.0" || r.Files < 48 {
		t.Fatalf("version %q, %d files", r.Version, r.Files)
	}
	// The brief text (nexus validate without -v) shows no finding and
	// counts the known upstream deviations on its summary line.
	var brief strings.Builder
	if err := r.WriteBrief(&brief); err != nil {
		t.Fatal(err)
	}
	if want := "note: 3 known upstream deviations of nexus-core itself tolerated, not problems of this setup (C8; see docs/validate.md; -v lists them)\n0 errors, 0 warnings in " + fmt.Sprint(r.Files) + " files\n"; brief.String() != want {
		t.Errorf("brief text:\n%s\nwant\n%s", brief.String(), want)
	}
	// The only warnings are the three C8 lifecycle preconditions.
	if r.Warnings != 3 {
		t.Fatalf("%d warnings: %+v", r.Warnings, r.Findings)
	}
	for _, f := range r.Findings {
		if !strings.Contains(f.Message, "C8") || !strings.HasPrefix(f.File, "conformance/lifecycle/") {
			t.Errorf("unexpected finding %s", f)
		}
	}
	checkGolden(t, "clean", r)
}

func TestValidateCorrupted(t *testing.T) {
	// The corruptions leave schema/ alone, so one compiled set serves all.
	schemas := schema.NewCoreSet(testenv.CoreDir(t))
	for _, tc := range corruptions {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := copyCore(t)
			tc.mutate(t, dir)
			r := Validate(dir, schemas)
			for _, w := range tc.wants {
				if !hasFinding(r, w) {
					var b strings.Builder
					r.WriteText(&b)
					t.Errorf("missing %s at %s %s containing %q; got:\n%s", w.sev, w.file, w.path, w.contains, b.String())
				}
			}
			wantErr := false
			for _, w := range tc.wants {
				wantErr = wantErr || w.sev == SeverityError
			}
			if r.OK() == wantErr {
				t.Errorf("OK() = %v with %d errors", r.OK(), r.Errors)
			}
			checkGolden(t, tc.name, r)
		})
	}
}

func hasFinding(r *Report, w want) bool {
	for _, f := range r.Findings {
		if f.Severity == w.sev && f.File == w.file && f.Path == w.path && strings.Contains(f.Message, w.contains) && f.Line >= 1 && f.Col >= 1 {
			return true
		}
	}
	return false
}

// checkGolden compares the text rendering with testdata/validate/<name>.golden.
func checkGolden(t *testing.T, name string, r *Report) {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	// Messages naming the distribution directory would differ per run.
	b = *bytes.NewBuffer(bytes.ReplaceAll(b.Bytes(), []byte(r.Dir), []byte("$CORE")))
	path := filepath.Join("testdata", "validate", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./vocabulary -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(golden, b.Bytes()) {
		t.Errorf("text output differs from %s (rerun with -update if the change is intended)\n--- got:\n%s--- want:\n%s", path, b.String(), golden)
	}
}

func TestReportJSON(t *testing.T) {
	dir := copyCore(t)
	replaceIn("agents/engineer/meta.yml", "category: do\n", "category: doo\n")(t, dir)
	r := Validate(dir, schema.NewCoreSet(dir))
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Errors   int `json:"errors"`
		Files    int `json:"files"`
		Findings []struct {
			Severity, File, Path, Message, Gate string
			Line, Col                           int
		} `json:"findings"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Errors == 0 || doc.Errors != r.Errors || len(doc.Findings) != len(r.Findings) || doc.Files != r.Files {
		t.Fatalf("json %s", b)
	}
	f := doc.Findings[0]
	if f.File != "agents/engineer/meta.yml" || f.Line != 6 || f.Col != 1 || f.Path != "$.category" || f.Gate != "G1" {
		t.Fatalf("first finding %+v", f)
	}
}

func TestCapabilityMap(t *testing.T) {
	dir := testenv.CoreDir(t)
	full := map[string][]string{}
	for _, c := range []string{"file_creation", "file_deletion", "file_modification", "interactive_shell_session",
		"nexus_task_creation", "nexus_task_metadata_modification", "nexus_task_state_transition",
		"partial_file_edit", "shell_command_exec", "structured_document_edit", "subprocess_spawn"} {
		full[c] = []string{"SomeTool"}
	}
	schemas := schema.NewCoreSet(dir)
	if r := ValidateWith(DirDist(dir, ""), schemas, Options{Host: "test", Classes: full}); r.Errors != 0 || r.Warnings != 3 {
		t.Fatalf("every class covered: %d errors, %d warnings", r.Errors, r.Warnings)
	}
	partial := map[string][]string{}
	for k, v := range full {
		partial[k] = v
	}
	delete(partial, "structured_document_edit") // one of no_file_edit's five
	delete(partial, "nexus_task_creation")      // no_task_create's only class
	r := ValidateWith(DirDist(dir, ""), schemas, Options{Host: "test", Classes: partial})
	if !hasFinding(r, want{SeverityWarning, "vocabulary/capabilities.yml", "$.capabilities[0].blocks_semantic_classes[4]", `class "structured_document_edit"`}) {
		t.Errorf("uncovered class not reported: %+v", r.Findings)
	}
	if !hasFinding(r, want{SeverityError, "vocabulary/capabilities.yml", "$.capabilities[1]", `capability "no_task_create" (used by`}) {
		t.Errorf("unenforceable capability not reported: %+v", r.Findings)
	}
}
