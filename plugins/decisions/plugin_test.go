package decisions

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/goldens"
	"github.com/nexus-harness/nexus/plugins/decisions/store"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

var testNow = time.Date(2026, 4, 16, 10, 22, 3, 114512000, time.UTC)

// newProject makes a registered repo with a scaffolded store holding the
// golden "main" corpus, and a configured plugin working in that repo.
func newProject(t testing.TB, mode string) (*Plugin, string, *store.FS) {
	t.Helper()
	home := t.TempDir()
	repo := t.TempDir()
	reg, err := store.LoadRegistry(home)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := reg.Register("Ledgerly", repo, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Save(); err != nil {
		t.Fatal(err)
	}
	dir, _ := reg.StorePath(proj.ID)
	if err := store.Scaffold(dir, "Ledgerly", testNow, decision.Documented); err != nil {
		t.Fatal(err)
	}
	if err := store.WriteRepoConfig(repo, &store.RepoConfig{Mode: store.ModeLocal, ID: proj.ID, Name: "Ledgerly"}); err != nil {
		t.Fatal(err)
	}
	var corpora struct {
		Corpora map[string][]struct{ Stem, Markdown string } `json:"corpora"`
	}
	raw, err := os.ReadFile(filepath.Join(goldens.Dir(t), "check_decision_corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &corpora); err != nil {
		t.Fatal(err)
	}
	for _, d := range corpora.Corpora["main"] {
		if err := os.WriteFile(filepath.Join(dir, "decisions", d.Stem+".md"), []byte(d.Markdown), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := New()
	p.Now = func() time.Time { return testNow }
	p.Getenv = func(string) string { return "" }
	if err := p.Configure(context.Background(), &sdk.Config{ProjectDir: repo, Settings: map[string]string{decisionsapi.SettingHome: home, decisionsapi.SettingFrontmatter: mode}}); err != nil {
		t.Fatal(err)
	}
	fs, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p, repo, fs
}

func call(t testing.TB, p *Plugin, name, args string) *sdk.ToolResult {
	t.Helper()
	res, err := p.CallTool(context.Background(), name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

func TestInfo(t *testing.T) {
	info, err := New().Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{decisionsapi.ToolCheckDecision: true, decisionsapi.ToolProposeDecision: false, decisionsapi.ToolGetDecision: true, decisionsapi.ToolListDecisions: true,
		decisionsapi.ToolSearchDecisions: true, decisionsapi.ToolGetContext: true, decisionsapi.ToolGetRawFile: true, decisionsapi.ToolDiffSince: true, decisionsapi.ToolFlagQuestion: false,
		decisionsapi.ToolUpdateState: false, decisionsapi.ToolListProjects: true}
	if len(info.Tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(info.Tools), len(want))
	}
	for _, tool := range info.Tools {
		ro, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		a := tool.Annotations
		if a.ReadOnly != ro || a.Idempotent != ro || a.Destructive || a.OpenWorld || a.Title == "" || tool.Description == "" {
			t.Errorf("%s annotations %+v", tool.Name, a)
		}
		var s map[string]any
		if err := json.Unmarshal(tool.InputSchema, &s); err != nil || s["type"] != "object" {
			t.Errorf("%s schema %s: %v", tool.Name, tool.InputSchema, err)
		}
		props := s["properties"].(map[string]any)
		if tool.Name != decisionsapi.ToolListProjects {
			if _, ok := props["project_id"]; !ok {
				t.Errorf("%s lacks project_id", tool.Name)
			}
		}
	}
}

func TestCallTools(t *testing.T) {
	p, repo, fs := newProject(t, "documented")
	for _, tc := range []struct {
		name, tool, args string
		isError          bool
		contains         []string
		structured       []string
	}{
		{"check", decisionsapi.ToolCheckDecision, `{"proposed_approach":"Switch the primary database from PostgreSQL to MongoDB","context":"Invoice line items would fit a document model better."}`,
			false, []string{"Found 5 related decisions:", "  - D002  [active]  BM25  8.45    <- top match", "Call get_decision on each related decision before proposing."},
			[]string{`"store": "local"`, `"score": 8.445`, `"project": {"id": "`}},
		{"check too long", decisionsapi.ToolCheckDecision, `{"proposed_approach":"` + strings.Repeat("x", 5001) + `"}`,
			false, []string{"Error: Proposed approach exceeds maximum length of 5000 characters (got 5001)."}, nil},
		{"get full", decisionsapi.ToolGetDecision, `{"number":2}`, false, []string{"# 002 \u2014 Use PostgreSQL as the primary datastore"}, nil},
		{"get header", decisionsapi.ToolGetDecision, `{"number":2,"mode":"header"}`, false, []string{"status: active\n", "# 002 \u2014"}, nil},
		{"get missing", decisionsapi.ToolGetDecision, `{"number":404}`, false, []string{"Error: Decision 404 not found"}, nil},
		{"list", decisionsapi.ToolListDecisions, `{"limit":2}`, false, []string{"Decisions (2 total):"}, []string{`"decisions": [{"number": 62`}},
		{"search", decisionsapi.ToolSearchDecisions, `{"query":"row-level security"}`, false, []string{`Found `, "D018"}, []string{`"results": [{"number": 18`}},
		{"search blank", decisionsapi.ToolSearchDecisions, `{"query":"  "}`, false, []string{"Error: search_decisions requires a non-empty query."}, nil},
		{"context L0", decisionsapi.ToolGetContext, `{}`, false, []string{"## Recent Decisions\n- D"}, nil},
		{"context bad level", decisionsapi.ToolGetContext, `{"level":"L9"}`, true, []string{"Error executing tool get_context"}, nil},
		{"context int level", decisionsapi.ToolGetContext, `{"level":7}`, false, []string{`"reason": "Invalid level: 7"`}, nil},
		{"raw file", decisionsapi.ToolGetRawFile, `{"path":"state_current.md"}`, false, []string{`"content": "# Current State`}, nil},
		{"raw traversal", decisionsapi.ToolGetRawFile, `{"path":"../../etc/passwd"}`, false, []string{`"reason": "Invalid path: ../../etc/passwd"`}, nil},
		{"raw missing", decisionsapi.ToolGetRawFile, `{"path":"nope.md"}`, false, []string{`"File not found: nope.md"`, `"available_files": [`}, nil},
		{"diff none", decisionsapi.ToolDiffSince, `{}`, false, []string{`"diff": "No snapshots available."`}, nil},
		{"propose too long title", decisionsapi.ToolProposeDecision, `{"title":"` + strings.Repeat("t", 301) + `","rationale":"r"}`, false,
			[]string{`"status": "rejected"`, "Title exceeds maximum length of 300 characters (got 301)."}, nil},
		{"propose envelope token", decisionsapi.ToolProposeDecision, `{"title":"T","rationale":"abc</parameter>"}`, false, []string{"rationale contains tool-use envelope fragment '</parameter>'"}, nil},
		{"propose update without id", decisionsapi.ToolProposeDecision, `{"title":"","rationale":"long enough rationale text","operation":"update"}`, false,
			[]string{`operation='update' requires affected_decision_id`}, nil},
		{"propose unknown target", decisionsapi.ToolProposeDecision, `{"title":"","rationale":"long enough rationale text","operation":"supersede","affected_decision_id":"decision-099"}`, false,
			[]string{`affected_decision_id='decision-099' not found in store`}, nil},
		{"propose add", decisionsapi.ToolProposeDecision, `{"title":"Adopt Mermaid for diagrams","rationale":"Diagrams live beside the prose as Mermaid markup so reviewers see changes.","decision_type":"pattern"}`, false,
			[]string{`"status": "confirmed"`, `"decision_id": "063-adopt-mermaid-for-diagrams"`, `"project": {`}, nil},
		{"propose library_choice", decisionsapi.ToolProposeDecision, `{"title":"Adopt chi","rationale":"chi is small, idiomatic and compatible with net/http.","decision_type":"library_choice"}`, true,
			[]string{"'library_choice' is not a valid DecisionType"}, nil},
		{"diff after propose", decisionsapi.ToolDiffSince, `{}`, false, []string{`"diff": "Not enough snapshots to compute a diff (need at least 2)."`}, nil},
		{"flag", decisionsapi.ToolFlagQuestion, `{"question":"Should the mascot be a llama?"}`, false, []string{"Question flagged."}, nil},
		{"state", decisionsapi.ToolUpdateState, `{"delta":"Billing service deployed to staging"}`, false, []string{"State updated."}, nil},
		{"diff two", decisionsapi.ToolDiffSince, `{}`, false, []string{"## Snapshot Diff (v002 \u2192 v003)", "state_current.md (changed)"}, nil},
		{"projects", decisionsapi.ToolListProjects, `{}`, false, []string{"Projects (1):", "Ledgerly  [local]"}, nil},
		{"unknown tool", "nope", `{}`, true, []string{"Unknown tool: nope"}, nil},
		{"other cwd", decisionsapi.ToolCheckDecision, `{"proposed_approach":"x","cwd":"/"}`, false, []string{"No decision store found"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, p, tc.tool, tc.args)
			if res.IsError != tc.isError {
				t.Errorf("IsError = %v, want %v (%s)", res.IsError, tc.isError, res.Text)
			}
			for _, c := range tc.contains {
				if !strings.Contains(res.Text, c) {
					t.Errorf("text lacks %q:\n%s", c, res.Text)
				}
			}
			for _, c := range tc.structured {
				if !strings.Contains(string(res.Structured), c) {
					t.Errorf("structured lacks %q:\n%s", c, res.Structured)
				}
			}
		})
	}
	if _, ok, _ := fs.ReadFile("decisions/063-adopt-mermaid-for-diagrams.md"); !ok {
		t.Error("proposed decision not written")
	}
	if metas, _ := fs.ListSnapshots(); len(metas) != 3 {
		t.Errorf("%d snapshots after three writes", len(metas))
	}
	_ = repo
}

func TestReferenceFrontmatterSetting(t *testing.T) {
	p, _, fs := newProject(t, "reference")
	res := call(t, p, decisionsapi.ToolProposeDecision, `{"title":"Keep a changelog","rationale":"Every release gets a human-written changelog entry."}`)
	if !strings.Contains(res.Text, `"status": "confirmed"`) {
		t.Fatalf("propose: %s", res.Text)
	}
	text, _, _ := fs.ReadFile("decisions/063-keep-a-changelog.md")
	if !strings.Contains(text, "decision_type: null\n") || !strings.Contains(text, "source: mcp\n") {
		t.Errorf("reference frontmatter not written:\n%s", text)
	}
	if err := New().Configure(context.Background(), &sdk.Config{Settings: map[string]string{decisionsapi.SettingFrontmatter: "fancy"}}); err == nil {
		t.Error("invalid frontmatter setting accepted")
	}
	// The store subscribes to no event: nexus never sends it one, and the
	// embedded UnimplementedPlugin answers one sent anyway.
	if info, _ := New().Info(context.Background()); len(info.Events) != 0 {
		t.Errorf("the store lists events %v", info.Events)
	}
	if r, err := New().HandleEvent(context.Background(), &sdk.Event{Name: sdk.EventSessionStart}); !errors.Is(err, sdk.ErrUnimplemented) {
		t.Errorf("HandleEvent = %+v, %v; want ErrUnimplemented", r, err)
	}
}

func TestExplicitStoreSetting(t *testing.T) {
	_, _, fs := newProject(t, "")
	p := New()
	p.Now = func() time.Time { return testNow }
	if err := p.Configure(context.Background(), &sdk.Config{ProjectDir: t.TempDir(), Settings: map[string]string{decisionsapi.SettingStore: fs.Root(), decisionsapi.SettingHome: t.TempDir()}}); err != nil {
		t.Fatal(err)
	}
	res := call(t, p, decisionsapi.ToolCheckDecision, `{"proposed_approach":"Use PostgreSQL full-text search for invoices"}`)
	if !strings.Contains(res.Text, "D051") {
		t.Errorf("explicit store not used: %s", res.Text)
	}
}

// TestInfoIsDecisionsAPI holds the store's self-description to the facts
// nexus declares it with (decisionsapi): its name, version and exactly its
// tools. nexus reserves and serves those names without starting the store.
func TestInfoIsDecisionsAPI(t *testing.T) {
	info, err := New().Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != decisionsapi.Name || info.Version != decisionsapi.Version {
		t.Errorf("Info names %s %s, decisionsapi %s %s", info.Name, info.Version, decisionsapi.Name, decisionsapi.Version)
	}
	var offered []string
	for _, s := range info.Tools {
		offered = append(offered, s.Name)
	}
	slices.Sort(offered)
	want := decisionsapi.Tools()
	slices.Sort(want)
	if !slices.Equal(offered, want) {
		t.Fatalf("Info offers %v, decisionsapi lists %v", offered, want)
	}
	for _, n := range offered {
		if !decisionsapi.IsTool(n) {
			t.Errorf("IsTool(%q) = false", n)
		}
	}
	if decisionsapi.IsTool("nx_plan_start") {
		t.Error("IsTool(nx_plan_start) = true")
	}
}
