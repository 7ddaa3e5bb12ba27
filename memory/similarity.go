package memory

import (
	"strings"
	"sync"
	"unicode"
)

// Merge-before-create measure (documented in docs/memory.md).
//
// A save candidate (topic + content) is scored against every existing
// memory file of the same category:
//
//	score = 0.6 · J(topic words, title words)
//	      + 0.4 · C(candidate words, file words)
//
// where J is the Jaccard index |A∩B| / |A∪B|, C is containment |A∩B| / |A|
// (how much of the candidate the file already covers), "title words" are
// the words of the file's name after its category prefix plus those of its
// first "# " heading, and "file words" are the words of the whole file
// (title, every heading and the body). Words are lower-cased runs of
// letters and digits, without English stop words, one-character words and
// pure numbers, with a plural "s" folded ("files" = "file"). The score is
// in [0, 1]; the best-scoring file (ties: the smaller name) is extended
// when its score reaches memory.merge.threshold (default 0.35).
//
// Why this shape: the title is the strongest statement of a file's topic
// and both word sets are short, so Jaccard fits; a file's body grows with
// every merge, so the body term asks how much of the new text the file
// already holds (containment) rather than Jaccard, which would push long,
// often-extended files ever further from new saves about their own topic.
const (
	titleWeight = 0.6
	bodyWeight  = 0.4
)

// fileWords is what the measure needs from one existing file.
type fileWords struct {
	title map[string]bool
	all   map[string]bool
}

// wordsOfFile splits a memory file into its title words and all its words.
func wordsOfFile(nameTopic, content string) fileWords {
	fw := fileWords{title: map[string]bool{}, all: map[string]bool{}}
	for _, w := range words(nameTopic) {
		fw.title[w] = true
		fw.all[w] = true
	}
	sawTitle := false
	for _, line := range strings.Split(content, "\n") {
		t := strings.TrimSpace(line)
		if !sawTitle && strings.HasPrefix(t, "# ") {
			sawTitle = true
			for _, w := range words(t[2:]) {
				fw.title[w] = true
			}
		}
		for _, w := range words(t) {
			fw.all[w] = true
		}
	}
	return fw
}

// similarity scores a candidate against one file.
func similarity(topic, cand map[string]bool, f fileWords) float64 {
	return titleWeight*jaccard(topic, f.title) + bodyWeight*containment(cand, f.all)
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

func containment(a, b map[string]bool) float64 {
	if len(a) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a))
}

func wordSet(texts ...string) map[string]bool {
	s := map[string]bool{}
	for _, t := range texts {
		for _, w := range words(t) {
			s[w] = true
		}
	}
	return s
}

// words returns the comparable words of a text, in order (with repeats).
func words(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		w := strings.ToLower(f)
		if len([]rune(w)) < 2 || stopWords()[w] || allDigits(w) {
			continue
		}
		out = append(out, fold(w))
	}
	return out
}

// fold removes a plural "s" ("files" → "file"; "class", "status", "basis"
// stay).
func fold(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") {
		return w[:len(w)-1]
	}
	return w
}

func allDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

// stopWords is built on first use (see categoryCues).
var stopWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also am an and any are as at be
		because been before being below between both but by can could did do does doing down during each
		few for from further had has have having he her here hers him his how if in into is it its itself
		just me more most my no nor not now of off on once only or other our ours out over own same she
		should so some such than that the their theirs them then there these they this those through to
		too under until up very was we were what when where which while who whom why will with would you
		your yours via per`) {
		m[w] = true
	}
	return m
})
