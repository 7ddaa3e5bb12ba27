package kernel

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/goldens"
)

type proposeFixture struct {
	Meta struct {
		FrozenNow string `json:"frozen_now_utc"`
		BaseStore struct {
			Decisions []stemDoc         `json:"decisions"`
			Files     map[string]string `json:"files"`
		} `json:"base_store"`
	} `json:"meta"`
	Cases []struct {
		ID       string         `json:"id"`
		Kwargs   map[string]any `json:"kwargs"`
		Expected struct {
			Result json.RawMessage `json:"result"`
			Raises *struct {
				Exception string `json:"python_exception"`
				Message   string `json:"message"`
			} `json:"raises"`
			FilesWritten          map[string]string `json:"files_written"`
			FilesWrittenReference map[string]string `json:"files_written_reference"`
		} `json:"expected"`
	} `json:"cases"`
}

func optString(m map[string]any, k string) *string {
	if v, ok := m[k]; ok && v != nil {
		s := v.(string)
		return &s
	}
	return nil
}

func requestOf(kw map[string]any) ProposeRequest {
	req := ProposeRequest{
		Title: kw["title"].(string), Rationale: kw["rationale"].(string),
		Rejected: kw["rejected"], FilesAffected: kw["files_affected"],
		Confidence: optString(kw, "confidence"), DecisionType: optString(kw, "decision_type"),
		Reversibility: optString(kw, "reversibility"), Source: optString(kw, "source"),
	}
	if s := optString(kw, "operation"); s != nil {
		req.Operation = *s
	}
	if s := optString(kw, "affected_decision_id"); s != nil {
		req.AffectedDecisionID = *s
	}
	if rq, ok := kw["resolves_questions"].([]any); ok {
		for _, q := range rq {
			req.ResolvesQuestions = append(req.ResolvesQuestions, q.(string))
		}
	}
	return req
}

func TestProposeGolden(t *testing.T) {
	var f proposeFixture
	goldens.Load(t, "propose_decision.json", &f)
	now, err := time.Parse(time.RFC3339Nano, f.Meta.FrozenNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, tc := range f.Cases {
		for _, mode := range []decision.Frontmatter{decision.Documented, decision.Reference} {
			t.Run(tc.ID+"/"+string(mode), func(t *testing.T) {
				s := memStoreOf(f.Meta.BaseStore.Decisions)
				for p, text := range f.Meta.BaseStore.Files {
					s.Files[p] = text
				}
				before := map[string]string{}
				for p, text := range s.Files {
					before[p] = text
				}
				res, err := Propose(context.Background(), s, requestOf(tc.Kwargs), ProposeOptions{Now: now, Frontmatter: mode})
				if tc.Expected.Raises != nil {
					if err == nil || !strings.Contains(err.Error(), tc.Expected.Raises.Message) {
						t.Fatalf("error = %v, want one containing %q", err, tc.Expected.Raises.Message)
					}
				} else {
					if err != nil {
						t.Fatal(err)
					}
					sameJSON(t, res.JSON(), tc.Expected.Result)
				}
				want := tc.Expected.FilesWritten
				if mode == decision.Reference {
					want = tc.Expected.FilesWrittenReference
				}
				written := map[string]string{}
				for p, text := range s.Files {
					if before[p] != text {
						written[p] = text
					}
				}
				if len(written) != len(want) {
					t.Errorf("wrote %d files, want %d: %v", len(written), len(want), keys(written))
				}
				for p, text := range want {
					if written[p] != text {
						t.Errorf("%s:\n%q\nwant\n%q", p, written[p], text)
					}
				}
			})
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestQuestionsRoundTrip(t *testing.T) {
	for _, text := range []string{
		"", "# Open Questions\n", "\n\n# Q\n\n- [Q1] a\n  cont\n### Topic [Q2]\nmore\n\n## Resolved\n- [Resolved by D3 on 2026-01-01] [Q4] x",
		"# Open Questions\n- [First unresolved question, e.g. \"x\"]\n- ~~[Example resolved question]~~ → Resolved: [y]\n",
	} {
		q := ParseQuestions(text)
		got := q.Format()
		want := text
		if !strings.HasPrefix(strings.TrimLeft(text, "\n"), "# ") {
			want = "# Open Questions\n" + strings.TrimLeft(text, "\n")
			if strings.TrimLeft(text, "\n") == "" {
				want = "# Open Questions"
			}
		} else {
			want = strings.TrimLeft(text, "\n")
		}
		if got != want {
			t.Errorf("ParseQuestions(%q).Format() = %q, want %q", text, got, want)
		}
	}
	q := ParseQuestions("# Q\n\n- [Q1] a\n- [Q2] b\n")
	if msg := q.CheckResolvable([]string{"Q9", "Q1", "nope"}); !strings.Contains(msg, "'Q9', 'nope'") {
		t.Errorf("unknown message = %q", msg)
	}
	if got := q.NextQNumber(); got != 3 {
		t.Errorf("NextQNumber = %d", got)
	}
	q.Add("- [Q3] c")
	if got := q.Format(); got != "# Q\n\n- [Q3] c\n- [Q1] a\n- [Q2] b\n" {
		t.Errorf("after Add: %q", got)
	}
}

func TestProposeHalfStates(t *testing.T) {
	var f proposeFixture
	goldens.Load(t, "propose_decision.json", &f)
	now := time.Date(2026, 4, 16, 10, 22, 3, 0, time.UTC)
	medium := "medium"
	for _, tc := range []struct {
		name, affected, reason string
		touched                int
	}{
		{"no number", "notes", "Cannot derive supersession ref from 'notes'.", 0},
		{"old decision missing", "decision-099", "supersede half-state: new decision 039-valkey-everywhere written; old decision matching 'decision-099' not found to flip.", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := memStoreOf(f.Meta.BaseStore.Decisions)
			res, err := Propose(context.Background(), s, ProposeRequest{Title: "Valkey everywhere", Rationale: "Valkey replaces every Redis instance we run.",
				Operation: OpSupersede, AffectedDecisionID: tc.affected, Confidence: &medium}, ProposeOptions{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != "rejected" || res.Tier != 2 || res.Operation != OpReject || res.Error == nil ||
				res.Error.Kind != "error" || res.Error.Reason != tc.reason || res.Assessment != tc.reason || len(res.Touched) != tc.touched {
				t.Errorf("result = %+v (error %+v)", res, res.Error)
			}
		})
	}
	s := memStoreOf(f.Meta.BaseStore.Decisions)
	res, err := Propose(context.Background(), s, ProposeRequest{Title: "", Rationale: "An update for a decision that is not there.", Operation: OpUpdate, AffectedDecisionID: "decision-404"}, ProposeOptions{Now: now})
	if err != nil || res.Error == nil || res.Error.Reason != "update target 'decision-404' not found in store." {
		t.Errorf("update of a missing target = %+v, %v", res, err)
	}
	none := "  "
	res, err = Propose(context.Background(), s, ProposeRequest{Title: "Reasonless", Rationale: "A rejected alternative without any reason.", Confidence: &medium,
		DecisionType: &none, Rejected: []any{"Just a name"}}, ProposeOptions{Now: now})
	if err == nil || !strings.Contains(err.Error(), "without reasons") {
		t.Errorf("reasonless rejection = %+v, %v", res, err)
	}
}

// A hash index nested deeper than pyjson.MaxDepth is unreadable, so
// empty (as any unreadable index): the proposal goes through and the
// index is written anew, small. Read and written back, the 20 KB file
// nested 10,000 deep became 200 MB in 4 s.
func TestProposeWithADeepHashIndex(t *testing.T) {
	var f proposeFixture
	goldens.Load(t, "propose_decision.json", &f)
	s := memStoreOf(f.Meta.BaseStore.Decisions)
	s.Files[HashesFile] = `{"a":` + strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000) + `}`
	medium := "medium"
	res, err := Propose(context.Background(), s, ProposeRequest{Title: "Keep state files as JSON", Rationale: "JSON is what the schemas describe and every harness reads.",
		Confidence: &medium}, ProposeOptions{Now: time.Date(2026, 4, 16, 10, 22, 3, 0, time.UTC)})
	if err != nil || res.Status != "confirmed" {
		t.Fatalf("propose = %+v, %v", res, err)
	}
	if n := len(s.Files[HashesFile]); n > 1024 || strings.Contains(s.Files[HashesFile], "[[") {
		t.Errorf("the hash index was written back with the deep value (%d bytes)", n)
	}
}
