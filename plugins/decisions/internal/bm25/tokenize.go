// Package bm25 reproduces the retrieval Nauro runs through bm25s 0.3.9:
// bm25s.tokenize (Python lower-casing, the (?u)\b\w\w+\b token pattern,
// stopwords removed before Snowball English stemming) and the default
// BM25 model (method "lucene", k1=1.5, b=0.75, float32 scores).
package bm25

import (
	"strings"
	"sync"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/stem"
)

// StopwordsEN is bm25s's English stopword list.
var StopwordsEN = []string{
	"a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in",
	"into", "is", "it", "no", "not", "of", "on", "or", "such", "that", "the",
	"their", "then", "there", "these", "they", "this", "to", "was", "will", "with",
}

// CheckStopwords is the list check_decision and the propose Tier 2 screen
// use: StopwordsEN plus "use".
var CheckStopwords = append(append([]string(nil), StopwordsEN...), "use")

// Tokenizer turns text into BM25 terms. It is safe for concurrent use.
type Tokenizer struct {
	stop map[string]bool

	mu    sync.RWMutex
	stems map[string]string // memoised stems: the vocabulary is small and repeats
}

// NewTokenizer returns a tokenizer that drops the given stopwords.
func NewTokenizer(stopwords []string) *Tokenizer {
	t := &Tokenizer{stop: make(map[string]bool, len(stopwords)), stems: make(map[string]string)}
	for _, w := range stopwords {
		t.stop[w] = true
	}
	return t
}

// Words returns the lower-cased regex tokens of text: every maximal run of
// at least two word characters (Python \w: letters, numbers, underscore).
func Words(text string) []string {
	lower := pytext.Lower(text)
	var out []string
	start, n := -1, 0
	for i, r := range lower {
		if pytext.IsWord(r) {
			if start < 0 {
				start, n = i, 0
			}
			n++
			continue
		}
		if start >= 0 && n >= 2 {
			out = append(out, lower[start:i])
		}
		start = -1
	}
	if start >= 0 && n >= 2 {
		out = append(out, lower[start:])
	}
	return out
}

// WithoutStopwords filters words through the tokenizer's stopword list.
func (t *Tokenizer) WithoutStopwords(words []string) []string {
	out := words[:0:0]
	for _, w := range words {
		if !t.stop[w] {
			out = append(out, w)
		}
	}
	return out
}

// Tokens returns the terms of text: words, minus stopwords, stemmed.
func (t *Tokenizer) Tokens(text string) []string {
	words := t.WithoutStopwords(Words(text))
	for i, w := range words {
		words[i] = t.stem(w)
	}
	return words
}

func (t *Tokenizer) stem(w string) string {
	t.mu.RLock()
	s, ok := t.stems[w]
	t.mu.RUnlock()
	if ok {
		return s
	}
	s = stem.English(w)
	t.mu.Lock()
	// Clones: a substring would pin the whole text it was cut from.
	s = strings.Clone(s)
	t.stems[strings.Clone(w)] = s
	t.mu.Unlock()
	return s
}
