package kernel

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/bm25"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/goldens"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyjson"
)

type stemDoc struct {
	Stem     string `json:"stem"`
	Markdown string `json:"markdown"`
}

func memStoreOf(docs []stemDoc) *MemStore {
	s := NewMemStore()
	for _, d := range docs {
		s.Files[DecisionsDir+"/"+d.Stem+".md"] = d.Markdown
	}
	return s
}

// sameJSON compares a rendered object with fixture JSON by value.
func sameJSON(t *testing.T, got *pyjson.Object, want json.RawMessage) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(pyjson.Dumps(got, pyjson.Options{})), &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("envelope:\n%s\nwant\n%s", pyjson.Dumps(got, pyjson.Options{}), want)
	}
}

func TestCheckDecisionGolden(t *testing.T) {
	runCheckGolden(t, "check_decision_corpus.json", "check_decision_queries.json")
}

// The tie goldens pin bm25s's exact order of equal scores (NumPy's
// argpartition, then a stable argsort, reversed).
func TestCheckDecisionTiesGolden(t *testing.T) {
	runCheckGolden(t, "check_ties_corpus.json", "check_ties.json")
}

// runCheckGolden runs every case of a check_decision golden: ids in the
// exact order, raw float32 scores, assessment, envelope and rendered text.
func runCheckGolden(t *testing.T, corpusFile, queriesFile string) {
	var corpora struct {
		Corpora map[string][]stemDoc `json:"corpora"`
	}
	goldens.Load(t, corpusFile, &corpora)
	var f struct {
		Cases []struct {
			ID       string  `json:"id"`
			Corpus   string  `json:"corpus"`
			Approach string  `json:"proposed_approach"`
			Context  *string `json:"context"`
			Expected struct {
				Related []struct {
					ID, Title, Status, Date string
					Score                   float64
					Preview                 string `json:"rationale_preview"`
				} `json:"related_decisions"`
				RawScores []struct {
					ID       string  `json:"id"`
					RawScore float64 `json:"raw_score"`
				} `json:"raw_scores"`
				Assessment string `json:"assessment"`
				Error      *struct{ Kind, Reason string }
				Envelope   json.RawMessage `json:"envelope"`
				Rendered   string          `json:"rendered"`
				TopK       []struct {
					CorpusIndex int     `json:"corpus_index"`
					RawScore    float64 `json:"raw_score"`
				} `json:"bm25s_topk"`
			} `json:"expected"`
			Debug *struct {
				QueryText  string   `json:"query_text"`
				QueryStems []string `json:"query_stems"`
				ActiveDocs int      `json:"active_docs"`
				Avgdl      float64  `json:"avgdl"`
			} `json:"debug"`
		} `json:"cases"`
	}
	goldens.Load(t, queriesFile, &f)
	if len(f.Cases) == 0 {
		t.Fatal("no cases")
	}
	corpusOf := map[string]*Corpus{}
	for name, docs := range corpora.Corpora {
		c, err := LoadCorpus(memStoreOf(docs))
		if err != nil {
			t.Fatal(err)
		}
		corpusOf[name] = c
	}
	for _, tc := range f.Cases {
		t.Run(tc.ID, func(t *testing.T) {
			c := corpusOf[tc.Corpus]
			ctx := ""
			if tc.Context != nil {
				ctx = *tc.Context
			}
			res, err := Check(c, tc.Approach, ctx)
			if err != nil {
				t.Fatal(err)
			}
			exp := tc.Expected
			if (res.Error == nil) != (exp.Error == nil) || (res.Error != nil && (res.Error.Kind != exp.Error.Kind || res.Error.Reason != exp.Error.Reason)) {
				t.Fatalf("error = %+v, want %+v", res.Error, exp.Error)
			}
			if res.Assessment != exp.Assessment {
				t.Errorf("assessment = %q\nwant %q", res.Assessment, exp.Assessment)
			}
			if len(res.Related) != len(exp.Related) {
				t.Fatalf("%d hits, want %d", len(res.Related), len(exp.Related))
			}
			for i, h := range res.Related {
				w := exp.Related[i]
				if h.ID != w.ID {
					t.Errorf("hit %d = %s, want %s", i, h.ID, w.ID)
				}
				if h.Raw != float32(exp.RawScores[i].RawScore) {
					t.Errorf("hit %d raw = %.9g, want %.9g", i, h.Raw, float32(exp.RawScores[i].RawScore))
				}
				if math.Abs(float64(h.Raw)-exp.RawScores[i].RawScore) > 1e-6 {
					t.Errorf("hit %d raw differs by more than 1e-6", i)
				}
				if h.Score != w.Score || h.Title != w.Title || h.Status != w.Status || h.Date != w.Date || h.RationalePreview != w.Preview {
					t.Errorf("hit %d = %+v, want %+v", i, h, w)
				}
			}
			if tc.Debug != nil {
				si, err := c.checkIndex()
				if err != nil {
					t.Fatal(err)
				}
				if si.ix.Len() != tc.Debug.ActiveDocs || si.ix.AvgDL() != tc.Debug.Avgdl {
					t.Errorf("index N=%d avgdl=%v, want %d %v", si.ix.Len(), si.ix.AvgDL(), tc.Debug.ActiveDocs, tc.Debug.Avgdl)
				}
				if got := ShapeQuery(tc.Approach, ctx); got != tc.Debug.QueryText {
					t.Errorf("query text = %q, want %q", got, tc.Debug.QueryText)
				}
				if got := si.tok.Tokens(tc.Debug.QueryText); !reflect.DeepEqual(got, tc.Debug.QueryStems) {
					t.Errorf("query stems = %q, want %q", got, tc.Debug.QueryStems)
				}
			}
			sameJSON(t, res.Envelope(), exp.Envelope)
			if got := RenderCheck(res); got != exp.Rendered {
				t.Errorf("rendered:\n%s\nwant:\n%s", got, exp.Rendered)
			}
			if len(exp.TopK) > 0 {
				// Every entry bm25s returned, zero scores included.
				si, err := c.checkIndex()
				if err != nil {
					t.Fatal(err)
				}
				scores := si.ix.Scores(si.tok.Tokens(ShapeQuery(tc.Approach, ctx)))
				got := bm25.TopK(scores, CheckTopK)
				if len(got) != len(exp.TopK) {
					t.Fatalf("top-k has %d entries, want %d", len(got), len(exp.TopK))
				}
				for i, d := range got {
					if d != exp.TopK[i].CorpusIndex || scores[d] != float32(exp.TopK[i].RawScore) {
						t.Errorf("top-k %d = doc %d (%.9g), want doc %d (%.9g)", i, d, scores[d], exp.TopK[i].CorpusIndex, float32(exp.TopK[i].RawScore))
					}
				}
			}
		})
	}
}
