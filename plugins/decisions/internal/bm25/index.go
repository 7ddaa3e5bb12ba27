package bm25

import (
	"errors"
	"math"
	"strings"
	"sync"
)

// Parameters of bm25s.BM25() with its defaults (method "lucene").
const (
	k1 = 1.5
	b  = 0.75
)

// ErrEmptyCorpus is what bm25s raises when every document of a non-empty
// corpus tokenises to nothing ("max() arg is an empty sequence").
var ErrEmptyCorpus = errors.New("max() arg is an empty sequence")

// Index is an immutable BM25 index over documents given as term counts
// over a shared Vocab.
type Index struct {
	n        int
	avgdl    float64
	vocab    *Vocab
	terms    int         // vocabulary terms present in the corpus
	idf      []float32   // by term id (0 for terms not in the corpus)
	postings [][]posting // by term id, documents ascending
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

// Vocab interns terms as dense ids. It only grows, and is safe for
// concurrent use, so indexes built at different times can share it (a
// store keeps each file's term counts across rebuilds).
type Vocab struct {
	mu    sync.RWMutex
	ids   map[string]int32
	terms []string
}

// NewVocab returns an empty vocabulary.
func NewVocab() *Vocab { return &Vocab{ids: map[string]int32{}} }

// ID returns the id of term, adding it when new.
func (v *Vocab) ID(term string) int32 {
	v.mu.RLock()
	id, ok := v.ids[term]
	v.mu.RUnlock()
	if ok {
		return id
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if id, ok := v.ids[term]; ok {
		return id
	}
	id = int32(len(v.terms))
	term = strings.Clone(term)
	v.ids[term] = id
	v.terms = append(v.terms, term)
	return id
}

// Lookup returns the id of a known term.
func (v *Vocab) Lookup(term string) (int32, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	id, ok := v.ids[term]
	return id, ok
}

// Term returns the term of an id.
func (v *Vocab) Term(id int32) string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.terms[id]
}

func (v *Vocab) size() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.terms)
}

// TermCount is how often one term occurs in a document.
type TermCount struct{ Term, N int32 }

// Doc is one document: its distinct terms with counts, and its length in
// terms (duplicates counted).
type Doc struct {
	Counts []TermCount
	Len    int32
}

// NewDoc counts a document's terms (in order of first appearance).
func (v *Vocab) NewDoc(terms []string) Doc {
	at := make(map[int32]int, len(terms))
	counts := make([]TermCount, 0, len(terms))
	for _, t := range terms {
		id := v.ID(t)
		if i, ok := at[id]; ok {
			counts[i].N++
			continue
		}
		at[id] = len(counts)
		counts = append(counts, TermCount{Term: id, N: 1})
	}
	// Stores keep one Doc per decision: no spare capacity.
	return Doc{Counts: append([]TermCount(nil), counts...), Len: int32(len(terms))}
}

// Build indexes docs (each a list of terms, duplicates kept) over a fresh
// vocabulary. An empty corpus gives an index that matches nothing.
func Build(docs [][]string) (*Index, error) {
	v := NewVocab()
	ds := make([]Doc, len(docs))
	for i, d := range docs {
		ds[i] = v.NewDoc(d)
	}
	return BuildDocs(v, ds)
}

// BuildDocs indexes documents counted over v.
func BuildDocs(v *Vocab, docs []Doc) (*Index, error) {
	ix := &Index{n: len(docs), vocab: v}
	if len(docs) == 0 {
		return ix, nil
	}
	nterms := v.size()
	df := make([]int32, nterms)
	total := 0
	for _, d := range docs {
		total += int(d.Len)
		for _, c := range d.Counts {
			df[c.Term]++
		}
	}
	for _, f := range df {
		if f > 0 {
			ix.terms++
		}
	}
	if ix.terms == 0 {
		return nil, ErrEmptyCorpus
	}
	ix.avgdl = float64(total) / float64(len(docs))
	ix.idf = make([]float32, nterms)
	ix.postings = make([][]posting, nterms)
	for id, f := range df {
		if f > 0 {
			ix.idf[id] = idf(len(docs), int(f))
			ix.postings[id] = make([]posting, 0, f)
		}
	}
	for i, d := range docs {
		for _, c := range d.Counts {
			ix.postings[c.Term] = append(ix.postings[c.Term], posting{int32(i), weight(ix.idf[c.Term], int(c.N), int(d.Len), ix.avgdl)})
		}
	}
	return ix, nil
}

// termID returns the id of a term present in this index's corpus.
func (ix *Index) termID(term string) (int32, bool) {
	if ix.vocab == nil {
		return 0, false
	}
	id, ok := ix.vocab.Lookup(term)
	if !ok || int(id) >= len(ix.postings) || len(ix.postings[id]) == 0 {
		return 0, false
	}
	return id, true
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

// Terms is the number of distinct terms in the corpus.
func (ix *Index) Terms() int { return ix.terms }

// IDF returns the stored idf of a term.
func (ix *Index) IDF(term string) (float32, bool) {
	id, ok := ix.termID(term)
	if !ok {
		return 0, false
	}
	return ix.idf[id], true
}

// InVocab keeps the query terms the corpus knows, in order, duplicates kept.
func (ix *Index) InVocab(query []string) []string {
	var out []string
	for _, t := range query {
		if _, ok := ix.termID(t); ok {
			out = append(out, t)
		}
	}
	return out
}

// Scores returns the float32 score of every document for the query terms.
func (ix *Index) Scores(query []string) []float32 {
	scores := make([]float32, ix.n)
	for _, t := range query {
		id, ok := ix.termID(t)
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
