package bm25

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/goldens"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
)

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestTokenizeGolden(t *testing.T) {
	var f struct {
		Meta struct {
			Stopwords []string `json:"stopwords"`
		} `json:"meta"`
		Cases []struct {
			ID       string `json:"id"`
			Text     string `json:"text"`
			Expected struct {
				Lowercased     string   `json:"lowercased"`
				RegexTokens    []string `json:"regex_tokens"`
				AfterStopwords []string `json:"after_stopwords"`
				Stems          []string `json:"stems"`
			} `json:"expected"`
		} `json:"cases"`
	}
	goldens.Load(t, "tokenize.json", &f)
	if !reflect.DeepEqual(f.Meta.Stopwords, CheckStopwords) {
		t.Fatalf("fixture stopwords %v differ from CheckStopwords %v", f.Meta.Stopwords, CheckStopwords)
	}
	tok := NewTokenizer(CheckStopwords)
	for _, c := range f.Cases {
		t.Run(c.ID, func(t *testing.T) {
			if got := pytext.Lower(c.Text); got != c.Expected.Lowercased {
				t.Errorf("lower = %q, want %q", got, c.Expected.Lowercased)
			}
			words := Words(c.Text)
			if !reflect.DeepEqual(orEmpty(words), c.Expected.RegexTokens) {
				t.Errorf("words = %q, want %q", words, c.Expected.RegexTokens)
			}
			if got := tok.WithoutStopwords(words); !reflect.DeepEqual(orEmpty(got), c.Expected.AfterStopwords) {
				t.Errorf("after stopwords = %q, want %q", got, c.Expected.AfterStopwords)
			}
			if got := tok.Tokens(c.Text); !reflect.DeepEqual(orEmpty(got), c.Expected.Stems) {
				t.Errorf("stems = %q, want %q", got, c.Expected.Stems)
			}
		})
	}
}

func TestBM25UnitGolden(t *testing.T) {
	var f struct {
		Meta struct {
			Stopwords []string `json:"stopwords"`
			K1        float64  `json:"k1"`
			B         float64  `json:"b"`
			Method    string   `json:"method"`
		} `json:"meta"`
		Cases []struct {
			ID       string   `json:"id"`
			Docs     []string `json:"docs"`
			Query    string   `json:"query"`
			Expected struct {
				DocStems          [][]string         `json:"doc_stems"`
				QueryStems        []string           `json:"query_stems"`
				QueryStemsInVocab []string           `json:"query_stems_in_vocab"`
				Avgdl             float64            `json:"avgdl"`
				IDF               map[string]float64 `json:"idf_float32"`
				Scores            []float64          `json:"scores_float32"`
				Raises            string             `json:"raises"`
				Message           string             `json:"message"`
			} `json:"expected"`
		} `json:"cases"`
	}
	goldens.Load(t, "bm25_unit.json", &f)
	if f.Meta.K1 != k1 || f.Meta.B != b || f.Meta.Method != "lucene" {
		t.Fatalf("fixture parameters %+v differ from the implementation", f.Meta)
	}
	tok := NewTokenizer(f.Meta.Stopwords)
	for _, c := range f.Cases {
		t.Run(c.ID, func(t *testing.T) {
			docs := make([][]string, len(c.Docs))
			for i, d := range c.Docs {
				docs[i] = tok.Tokens(d)
			}
			ix, err := Build(docs)
			if c.Expected.Raises != "" {
				if err == nil || err.Error() != c.Expected.Message {
					t.Fatalf("Build error = %v, want %q", err, c.Expected.Message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range docs {
				if !reflect.DeepEqual(orEmpty(docs[i]), c.Expected.DocStems[i]) {
					t.Errorf("doc %d stems = %q, want %q", i, docs[i], c.Expected.DocStems[i])
				}
			}
			q := tok.Tokens(c.Query)
			if !reflect.DeepEqual(orEmpty(q), c.Expected.QueryStems) {
				t.Errorf("query stems = %q, want %q", q, c.Expected.QueryStems)
			}
			if got := ix.InVocab(q); !reflect.DeepEqual(orEmpty(got), c.Expected.QueryStemsInVocab) {
				t.Errorf("in vocab = %q, want %q", got, c.Expected.QueryStemsInVocab)
			}
			if ix.AvgDL() != c.Expected.Avgdl {
				t.Errorf("avgdl = %v, want %v", ix.AvgDL(), c.Expected.Avgdl)
			}
			if ix.Terms() != len(c.Expected.IDF) {
				t.Errorf("vocabulary has %d terms, want %d", ix.Terms(), len(c.Expected.IDF))
			}
			for term, want := range c.Expected.IDF {
				got, ok := ix.IDF(term)
				if !ok || got != float32(want) {
					t.Errorf("idf(%q) = %v (%v), want %v", term, got, ok, float32(want))
				}
			}
			scores := ix.Scores(q)
			for i, want := range c.Expected.Scores {
				if scores[i] != float32(want) {
					t.Errorf("score[%d] = %.9g, want %.9g (diff %g)", i, scores[i], float32(want), math.Abs(float64(scores[i])-want))
				}
			}
		})
	}
}

func TestTopKeepsPositiveScoresOnly(t *testing.T) {
	ix, err := Build([][]string{{"x"}, {"y"}, {"x"}, {"x"}, {"z"}})
	if err != nil {
		t.Fatal(err)
	}
	hits := ix.Top([]string{"x"}, 5)
	if len(hits) != 3 {
		t.Fatalf("Top = %+v, want the three documents holding x", hits)
	}
	if got := ix.Top([]string{"nothing"}, 5); len(got) != 0 {
		t.Fatalf("Top with no shared term = %+v, want none", got)
	}
}

// With N <= k+2 NumPy's partition takes its small-kth path, which moves
// nothing when every score ties: the answer is the last k positions,
// highest first (the README of the tie goldens, "ties_tiny").
func TestTopKAllTiedSmall(t *testing.T) {
	for n := 1; n <= 7; n++ {
		k := min(5, n)
		scores := make([]float32, n)
		for i := range scores {
			scores[i] = 1
		}
		got := TopK(scores, k)
		for i, d := range got {
			if d != n-1-i {
				t.Fatalf("n=%d: TopK = %v, want descending from %d", n, got, n-1)
			}
		}
	}
}

// Whatever the tie order, TopK returns k positions holding the k largest
// scores, in descending score order, each position once.
func TestTopKSelectsTheLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 2000; iter++ {
		n := 1 + rng.IntN(300)
		k := 1 + rng.IntN(12)
		scores := make([]float32, n)
		levels := 1 + rng.IntN(6) // few levels: many ties
		for i := range scores {
			scores[i] = float32(rng.IntN(levels))
		}
		got := TopK(scores, k)
		want := append([]float32(nil), scores...)
		slices.Sort(want)
		slices.Reverse(want)
		if len(got) != min(k, n) {
			t.Fatalf("len = %d, want %d", len(got), min(k, n))
		}
		seen := map[int]bool{}
		for i, d := range got {
			if seen[d] {
				t.Fatalf("position %d returned twice", d)
			}
			seen[d] = true
			if scores[d] != want[i] {
				t.Fatalf("n=%d k=%d: rank %d holds %v, want %v", n, k, i, scores[d], want[i])
			}
		}
	}
}

func BenchmarkTopK(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	scores := make([]float32, 100_000)
	for i := range scores {
		scores[i] = float32(rng.IntN(50))
	}
	for b.Loop() {
		TopK(scores, 5)
	}
}
