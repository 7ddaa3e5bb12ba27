package kernel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/goldens"
)

func mainStore(t *testing.T) *MemStore {
	t.Helper()
	var corpora struct {
		Corpora map[string][]stemDoc `json:"corpora"`
	}
	goldens.Load(t, "check_decision_corpus.json", &corpora)
	return memStoreOf(corpora.Corpora["main"])
}

func TestLookups(t *testing.T) {
	s := mainStore(t)
	c, err := LoadCorpus(s)
	if err != nil {
		t.Fatal(err)
	}
	rows := ListDecisions(c, 3, false)
	if len(rows) != 3 {
		t.Fatalf("list returned %d rows", len(rows))
	}
	first, _ := rows[0].Get("number")
	second, _ := rows[1].Get("number")
	if first.(int) <= second.(int) {
		t.Errorf("list is not newest first: %v, %v", first, second)
	}
	if txt := RenderList(rows); !strings.HasPrefix(txt, "Decisions (3 total):\n\n  - D") {
		t.Errorf("list text = %q", txt)
	}
	if got := RenderList(nil); got != "No decisions recorded yet." {
		t.Errorf("empty list text = %q", got)
	}

	for _, tc := range []struct {
		num        int
		mode, want string
	}{
		{2, "full", "# 002 \u2014 Use PostgreSQL as the primary datastore"},
		{2, "header", "status: active\ndate: 2026-01-06"},
		{999, "full", "Error: Decision 999 not found"},
	} {
		got, err := GetDecision(s, tc.num, tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("GetDecision(%d, %s) = %q, want it to contain %q", tc.num, tc.mode, got, tc.want)
		}
	}

	hits, errp, err := Search(c, "PostgreSQL full-text search", 10, false)
	if err != nil || errp != nil {
		t.Fatal(err, errp)
	}
	if len(hits) == 0 || hits[0].Num != 51 {
		t.Fatalf("search top hit = %+v", hits)
	}
	if txt := RenderSearch(hits, nil); !strings.HasPrefix(txt, "Found ") || !strings.Contains(txt, "D051") {
		t.Errorf("search text = %q", txt)
	}
	if _, errp, _ := Search(c, "   ", 10, false); errp == nil || errp.Reason != SearchEmptyQuery {
		t.Errorf("blank query not rejected: %+v", errp)
	}
	if got := snippet("Alpha beta. Gamma delta.", "zzz"); got != "Alpha beta" {
		t.Errorf("fallback snippet = %q", got)
	}
	if got := snippet(strings.Repeat("x", 60)+" needle "+strings.Repeat("y", 60), "NEEDLE"); !strings.HasPrefix(got, "...") || !strings.HasSuffix(got, "...") {
		t.Errorf("windowed snippet = %q", got)
	}

	for _, tc := range []struct{ path, reason string }{
		{"../etc/passwd", "Invalid path: ../etc/passwd"},
		{"nope.md", "File not found: nope.md"},
	} {
		_, errp, _, err := RawFile(s, tc.path, nil)
		if err != nil || errp == nil || errp.Reason != tc.reason {
			t.Errorf("RawFile(%q) = %+v, %v", tc.path, errp, err)
		}
	}
}

func TestStateAndQuestions(t *testing.T) {
	now := time.Date(2026, 4, 16, 10, 22, 3, 0, time.UTC)
	s := NewMemStore()
	if got, _ := UpdateState(context.Background(), s, "anything", now); got != "State updated." || len(s.Files) != 0 {
		t.Fatalf("update without a state file = %q, files %v", got, s.Files)
	}
	s.Files[StateCurrentFile] = "# Current State\n\n- Deploy billing service to staging cluster\n"
	got, err := UpdateState(context.Background(), s, "billing service staging cluster is live", now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "State updated. State update shares keywords with existing entry: - Deploy") {
		t.Errorf("overlap warning = %q", got)
	}
	if s.Files[StateCurrentFile] != "# Current State\n\nbilling service staging cluster is live\n\n*Last updated: 2026-04-16T10:22Z*\n" {
		t.Errorf("state_current = %q", s.Files[StateCurrentFile])
	}
	if s.Files[StateHistoryFile] != "## 2026-04-16T10:22Z\n\n- Deploy billing service to staging cluster\n\n---\n" {
		t.Errorf("state_history = %q", s.Files[StateHistoryFile])
	}
	if got, _ := UpdateState(context.Background(), s, strings.Repeat("x", 5001), now); got != "Delta exceeds maximum length of 5000 characters (got 5001)." {
		t.Errorf("long delta = %q", got)
	}

	s.Files[OpenQuestionsFile] = "# Open Questions\n\n- [Q1] First?\n"
	if got, err := FlagQuestion(context.Background(), s, "Second?", "why"); err != nil || got != "Question flagged." {
		t.Fatalf("flag = %q, %v", got, err)
	}
	if want := "# Open Questions\n\n- [Q2] Second? (context: why)\n- [Q1] First?\n"; s.Files[OpenQuestionsFile] != want {
		t.Errorf("questions = %q, want %q", s.Files[OpenQuestionsFile], want)
	}
	if got, _ := FlagQuestion(context.Background(), s, "x</parameter>", ""); !strings.Contains(got, "envelope fragment '</parameter>'") {
		t.Errorf("envelope check = %q", got)
	}
	s.Files[DecisionsDir+"/004-x.md"] = "irrelevant"
	if got, _ := ResolveQuestions(context.Background(), s, "D4", []string{"Q1"}, now); got != "Question(s) resolved." {
		t.Errorf("resolve = %q", got)
	}
	if !strings.Contains(s.Files[OpenQuestionsFile], "- [Resolved by D4 on 2026-04-16] [Q1] First?") {
		t.Errorf("not stamped: %q", s.Files[OpenQuestionsFile])
	}

	ctx, err := GetContext(mainStore(t), 0, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ctx, "## Recent Decisions\n- D") {
		t.Errorf("L0 = %q", ctx)
	}
	empty, _ := GetContext(NewMemStore(), 1, now)
	if empty != NoContextYet {
		t.Errorf("empty context = %q", empty)
	}
}
