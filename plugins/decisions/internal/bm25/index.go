package bm25

import (
	"errors"
	"math"
)

// Parameters of bm25s.BM25() with its defaults (method "lucene").
const (
	k1 = 1.5
	b  = 0.75
)

// ErrEmptyCorpus is what bm25s raises when every document of a non-empty
// corpus tokenises to nothing ("max() arg is an empty sequence").
var ErrEmptyCorpus = errors.New("max() arg is an empty sequence")

// Index is an immutable BM25 index over tokenised documents.
type Index struct {
	n        int
	avgdl    float64
	vocab    map[string]int
	idf      []float32
	postings [][]posting
}

type posting struct {
	doc int32
	w   float32
}

// Hit is a scored document.
type Hit struct {
	Doc   int     // position in the corpus passed to Build
	Score float32 // raw BM25 score
}

// Build indexes docs (each a list of terms, duplicates kept). An empty
// corpus gives an index that matches nothing.
func Build(docs [][]string) (*Index, error) {
	ix := &Index{n: len(docs), vocab: make(map[string]int)}
	if len(docs) == 0 {
		return ix, nil
	}
	total := 0
	type tf struct {
		term, count int
	}
	perDoc := make([][]tf, len(docs))
	var df []int
	for d, terms := range docs {
		total += len(terms)
		counts := make(map[int]int, len(terms))
		var order []int
		for _, t := range terms {
			id, ok := ix.vocab[t]
			if !ok {
				id = len(ix.vocab)
				ix.vocab[t] = id
				df = append(df, 0)
			}
			if counts[id] == 0 {
				order = append(order, id)
			}
			counts[id]++
		}
		for _, id := range order {
			df[id]++
			perDoc[d] = append(perDoc[d], tf{id, counts[id]})
		}
	}
	if len(ix.vocab) == 0 {
		return nil, ErrEmptyCorpus
	}
	ix.avgdl = float64(total) / float64(len(docs))
	ix.idf = make([]float32, len(df))
	for id, f := range df {
		ix.idf[id] = idf(len(docs), f)
	}
	ix.postings = make([][]posting, len(df))
	for id, f := range df {
		ix.postings[id] = make([]posting, 0, f)
	}
	for d, tfs := range perDoc {
		dl := len(docs[d])
		for _, x := range tfs {
			ix.postings[x.term] = append(ix.postings[x.term], posting{int32(d), weight(ix.idf[x.term], x.count, dl, ix.avgdl)})
		}
	}
	return ix, nil
}

// idf is Lucene's idf, computed in float64 and stored as float32.
func idf(n, df int) float32 {
	x := float64(float64(n-df) + 0.5)
	y := float64(float64(df) + 0.5)
	return float32(math.Log(float64(1 + float64(x/y))))
}

// weight is the stored per (document, term) score: idf times the Lucene tf
// component without the (k1+1) numerator, in float64 with one rounding to
// float32 at the end. Every step is converted explicitly so the compiler
// cannot fuse a multiply-add and change the last bit.
func weight(idf32 float32, tf, dl int, avgdl float64) float32 {
	x := float64(b * float64(dl))
	x = float64(x / avgdl)
	x = float64((1 - b) + x)
	x = float64(k1 * x)
	denom := float64(x + float64(tf))
	ratio := float64(float64(tf) / denom)
	return float32(float64(float64(idf32) * ratio))
}

// Len is the number of documents.
func (ix *Index) Len() int { return ix.n }

// AvgDL is the mean document length in terms.
func (ix *Index) AvgDL() float64 { return ix.avgdl }

// IDF returns the stored idf of a term.
func (ix *Index) IDF(term string) (float32, bool) {
	id, ok := ix.vocab[term]
	if !ok {
		return 0, false
	}
	return ix.idf[id], true
}

// InVocab keeps the query terms the corpus knows, in order, duplicates kept.
func (ix *Index) InVocab(query []string) []string {
	var out []string
	for _, t := range query {
		if _, ok := ix.vocab[t]; ok {
			out = append(out, t)
		}
	}
	return out
}

// Scores returns the float32 score of every document for the query terms.
func (ix *Index) Scores(query []string) []float32 {
	scores := make([]float32, ix.n)
	for _, t := range query {
		id, ok := ix.vocab[t]
		if !ok {
			continue
		}
		for _, p := range ix.postings[id] {
			scores[p.doc] = float32(scores[p.doc] + p.w)
		}
	}
	return scores
}

// Top returns up to k documents with a positive score, best first, in
// bm25s's order (TopK): equal scores come out as NumPy's partition leaves
// them, not by corpus position.
func (ix *Index) Top(query []string, k int) []Hit {
	scores := ix.Scores(query)
	var hits []Hit
	for _, d := range TopK(scores, k) {
		if !(scores[d] > 0) {
			break
		}
		hits = append(hits, Hit{Doc: d, Score: scores[d]})
	}
	return hits
}
