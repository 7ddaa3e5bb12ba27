package memory

import (
	"strings"
	"sync"
	"unicode"
)

// Deriving a category and a topic from `[m]` text (documented in
// docs/memory.md). The rules are plain and deterministic so the same text
// always lands in the same file:
//
// Category. An explicit leading "empirical:", "external:" or "pattern:"
// (any category id of the policy, then a colon) wins. Otherwise every word
// of the text is looked up in three cue lists below and a URL counts twice
// for external; the category with the most cues wins. No cue, or a tie at
// the top, is not a confident category: nexus then asks Lead to call the
// save tool with an explicit category and topic instead of guessing.
//
// Topic. The first three distinct content words of the first sentence (the
// text up to the first ". ", "!", "?", ";" or line break): lower-cased
// ASCII words (hyphenated words split) without stop words, one-letter words, words
// holding digits (dates and versions never reach a file name), and
// filler verbs and adverbs ("always", "measured", "use"). When the
// first sentence has fewer than two, the rest of the text tops it up.
// Fewer than two in all (text that is mostly numbers, or not in ASCII
// letters) is not a confident topic either.
//
// Built on first use: a hook process, which links this package, seldom
// derives a category, and building the tables cost every process about
// 30 µs and 28 KB.
var categoryCues = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"empirical": strings.Fields(`measured measure measurement benchmark benchmarked observed observe
		noticed found finding turns tested experiment experimented reproduced reproduce profiled profiling
		verified confirmed latency throughput slower faster timing took ms seconds regression actually
		flaky crash crashes fails failed`),
		"external": strings.Fields(`api apis upstream vendor vendors library libraries dependency dependencies
		sdk docs documentation documented spec specification rfc third-party quota limit limits rate
		deprecated deprecation changelog release provider endpoint endpoints license registry npm pypi
		official according requires requirement`),
		"pattern": strings.Fields(`always never workflow recipe steps step routine procedure checklist
		convention prefer instead habit pattern whenever approach technique trick tip run first then`),
	}
})

// cueIndex maps a cue word to its category.
var cueIndex = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for cat, ws := range categoryCues() {
		for _, w := range ws {
			m[w] = cat
		}
	}
	return m
})

// deriveCategory returns the category for text, or "" when no category is
// a confident choice. explicitRest is the text after an explicit
// "category:" prefix.
func deriveCategory(text string, ids []string) (cat, rest string) {
	head, tail, ok := strings.Cut(text, ":")
	if ok {
		h := strings.ToLower(strings.TrimSpace(head))
		for _, id := range ids {
			if h == id {
				return id, strings.TrimSpace(tail)
			}
		}
	}
	score := map[string]int{}
	lower := strings.ToLower(text)
	score["external"] += 2 * (strings.Count(lower, "http://") + strings.Count(lower, "https://"))
	for _, w := range asciiWords(lower) {
		if c, ok := cueIndex()[w]; ok {
			score[c]++
		}
	}
	best, bestN, tie := "", 0, false
	for _, id := range ids {
		switch n := score[id]; {
		case n > bestN:
			best, bestN, tie = id, n, false
		case n == bestN && n > 0:
			tie = true
		}
	}
	if bestN == 0 || tie {
		return "", text
	}
	return best, text
}

// deriveTopic returns a 2–3 word topic for text, or "".
func deriveTopic(text string) string {
	first, rest := firstSentence(text)
	var topic []string
	seen := map[string]bool{}
	take := func(s string) {
		for _, hw := range asciiWords(strings.ToLower(s)) {
			for _, w := range strings.Split(hw, "-") {
				if len(topic) == 3 {
					return
				}
				if len(w) < 2 || stopWords()[w] || seen[w] || hasDigit(w) || topicFiller()[w] {
					continue
				}
				seen[w] = true
				topic = append(topic, w)
			}
		}
	}
	take(first)
	if len(topic) < 2 {
		take(rest)
	}
	if len(topic) < 2 {
		return ""
	}
	return strings.Join(topic, " ")
}

// topicFiller are common words that say nothing about a topic.
var topicFiller = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"use": true, "using": true, "used": true, "get": true, "got": true, "make": true, "makes": true,
		"need": true, "needs": true, "note": true, "remember": true, "lesson": true, "learned": true,
		"thing": true, "things": true, "way": true, "also": true, "like": true, "want": true, "know": true,
		"don": true, "doesn": true, "isn": true, "won": true, "can": true, "cannot": true, "must": true,
		// cue words that are verbs or adverbs, not subjects
		"always": true, "never": true, "found": true, "turns": true, "actually": true, "noticed": true,
		"observed": true, "measured": true, "tested": true, "verified": true, "confirmed": true,
		"first": true, "then": true, "instead": true, "prefer": true, "took": true, "according": true,
		"requires": true, "run": true, "ran": true, "seems": true, "really": true, "whenever": true,
	}
})

func firstSentence(text string) (string, string) {
	for i, r := range text {
		switch r {
		case '\n', '!', '?', ';':
			return text[:i], text[i+1:]
		case '.':
			if i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n' {
				return text[:i], text[i+1:]
			}
		}
	}
	return text, ""
}

// asciiWords splits text into runs of ASCII letters, digits and hyphens
// (so "third-party" stays one word); anything else separates.
func asciiWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r > unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-')
	})
}

func hasDigit(w string) bool {
	return strings.IndexFunc(w, unicode.IsDigit) >= 0
}
