// Package stem implements the Snowball English (Porter2) stemmer as released
// in Snowball 3.x (libstemmer_c 3.1.0, the version PyStemmer 3.1.0 bundles),
// which the Nauro reference uses through bm25s.
//
// The Go stemmer modules on the module proxy are generated from Snowball 2.x
// and stem 16 words of the golden list differently (see the tests), so the
// algorithm is written out here. It works on code points: letters outside
// a-z are simply consonants, as in the UTF-8 Snowball runtime.
package stem

import "strings"

// English returns the Snowball English stem of a lower-cased word.
func English(word string) string {
	if out, ok := exceptions[word]; ok {
		return out
	}
	w := stemmer{b: []rune(word)}
	if len(w.b) < 3 {
		return word
	}
	w.prelude()
	w.markRegions()
	w.step1a()
	w.step1b()
	w.step1c()
	w.step2()
	w.step3()
	w.step4()
	w.step5()
	if w.yFound {
		for i, r := range w.b {
			if r == 'Y' {
				w.b[i] = 'y'
			}
		}
	}
	return string(w.b)
}

// exceptions are whole words with a fixed stem (Snowball's exception1).
var exceptions = map[string]string{
	"skis": "ski", "skies": "sky",
	"idly": "idl", "gently": "gentl", "ugly": "ugli", "early": "earli",
	"only": "onli", "singly": "singl",
	"sky": "sky", "news": "news", "howe": "howe",
	"atlas": "atlas", "cosmos": "cosmos", "bias": "bias", "andes": "andes",
}

// regionPrefixes fix R1 for words whose regular R1 would be misleading
// (generate/general, arsenic, paste, university, lateral, emergency, ...).
var regionPrefixes = []string{"gener", "commun", "arsen", "past", "univers", "later", "emerg", "organ", "inter"}

type stemmer struct {
	b      []rune
	p1, p2 int
	yFound bool
}

func isVowel(r rune) bool {
	switch r {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

func (w *stemmer) hasSuffix(s string) bool {
	n := len(s) // suffixes are ASCII
	if n > len(w.b) {
		return false
	}
	off := len(w.b) - n
	for i := 0; i < n; i++ {
		if w.b[off+i] != rune(s[i]) {
			return false
		}
	}
	return true
}

// longestSuffix returns the longest of cands that ends the word, or "".
func (w *stemmer) longestSuffix(cands []string) string {
	best := ""
	for _, c := range cands {
		if len(c) > len(best) && w.hasSuffix(c) {
			best = c
		}
	}
	return best
}

func (w *stemmer) replaceSuffix(n int, repl string) {
	w.b = append(w.b[:len(w.b)-n], []rune(repl)...)
}

func (w *stemmer) prelude() {
	if w.b[0] == '\'' {
		w.b = w.b[1:]
	}
	if len(w.b) > 0 && w.b[0] == 'y' {
		w.b[0] = 'Y'
		w.yFound = true
	}
	for i := 1; i < len(w.b); i++ {
		if w.b[i] == 'y' && isVowel(w.b[i-1]) {
			w.b[i] = 'Y'
			w.yFound = true
		}
	}
}

// pastVowelConsonant returns the position just after the first
// vowel-then-non-vowel pair at or after from, or -1.
func (w *stemmer) pastVowelConsonant(from int) int {
	i := from
	for i < len(w.b) && !isVowel(w.b[i]) {
		i++
	}
	if i >= len(w.b) {
		return -1
	}
	i++
	for i < len(w.b) && isVowel(w.b[i]) {
		i++
	}
	if i >= len(w.b) {
		return -1
	}
	return i + 1
}

func (w *stemmer) markRegions() {
	n := len(w.b)
	w.p1, w.p2 = n, n
	p1 := -1
	s := string(w.b)
	for _, pre := range regionPrefixes {
		if strings.HasPrefix(s, pre) {
			p1 = len([]rune(pre))
			break
		}
	}
	if p1 < 0 {
		p1 = w.pastVowelConsonant(0)
		if p1 < 0 {
			return
		}
	}
	w.p1 = p1
	if p2 := w.pastVowelConsonant(p1); p2 >= 0 {
		w.p2 = p2
	}
}

// shortSyllableAt reports whether the word part ending at end finishes with
// a short syllable (or is the special stem "past").
func (w *stemmer) shortSyllableAt(end int) bool {
	b := w.b
	// Backwards from end: a consonant other than w, x, Y; a vowel; a
	// consonant.
	if end >= 3 && isVowel(b[end-2]) && !isVowel(b[end-3]) {
		if c := b[end-1]; !isVowel(c) && c != 'w' && c != 'x' && c != 'Y' {
			return true
		}
	}
	if end == 2 && !isVowel(b[1]) && isVowel(b[0]) {
		return true
	}
	return end >= 4 && string(b[end-4:end]) == "past"
}

func (w *stemmer) containsVowel(from, to int) bool {
	for i := from; i < to; i++ {
		if isVowel(w.b[i]) {
			return true
		}
	}
	return false
}

var step1aSuffixes = []string{"sses", "ied", "ies", "s", "us", "ss"}

func (w *stemmer) step1a() {
	if suf := w.longestSuffix([]string{"'", "'s", "'s'"}); suf != "" {
		w.b = w.b[:len(w.b)-len(suf)]
	}
	switch w.longestSuffix(step1aSuffixes) {
	case "sses":
		w.replaceSuffix(4, "ss")
	case "ied", "ies":
		if len(w.b)-3 >= 2 {
			w.replaceSuffix(3, "i")
		} else {
			w.replaceSuffix(3, "ie")
		}
	case "s":
		// Delete when a vowel occurs before the letter preceding the s.
		if len(w.b) >= 2 && w.containsVowel(0, len(w.b)-2) {
			w.b = w.b[:len(w.b)-1]
		}
	}
}

var step1bSuffixes = []string{"eed", "eedly", "ed", "edly", "ing", "ingly"}

func (w *stemmer) step1b() {
	suf := w.longestSuffix(step1bSuffixes)
	if suf == "" {
		return
	}
	start := len(w.b) - len(suf)
	switch suf {
	case "eed", "eedly":
		stem := string(w.b[:start])
		if stem == "proc" || stem == "exc" || stem == "succ" {
			return
		}
		if start >= w.p1 {
			w.replaceSuffix(len(suf), "ee")
		}
		return
	case "ing":
		stem := w.b[:start]
		// dying, lying, tying, vying -> die, lie, tie, vie
		if len(stem) == 2 && stem[1] == 'y' && !isVowel(stem[0]) {
			w.replaceSuffix(4, "ie")
			return
		}
		switch string(stem) {
		case "inn", "out", "cann", "herr", "earr", "even":
			return
		}
	}
	if !w.containsVowel(0, start) {
		return
	}
	w.b = w.b[:start]
	switch {
	case w.hasSuffix("at"), w.hasSuffix("bl"), w.hasSuffix("iz"):
		w.b = append(w.b, 'e')
	case w.endsInDouble():
		n := len(w.b)
		// Keep the double in short words such as "add", "ebb", "odd".
		if n == 3 && (w.b[0] == 'a' || w.b[0] == 'e' || w.b[0] == 'o') {
			return
		}
		w.b = w.b[:n-1]
	default:
		if len(w.b) == w.p1 && w.shortSyllableAt(len(w.b)) {
			w.b = append(w.b, 'e')
		}
	}
}

func (w *stemmer) endsInDouble() bool {
	n := len(w.b)
	if n < 2 || w.b[n-1] != w.b[n-2] {
		return false
	}
	switch w.b[n-1] {
	case 'b', 'd', 'f', 'g', 'm', 'n', 'p', 'r', 't':
		return true
	}
	return false
}

func (w *stemmer) step1c() {
	n := len(w.b)
	if n < 3 {
		return
	}
	if last := w.b[n-1]; (last == 'y' || last == 'Y') && !isVowel(w.b[n-2]) {
		w.b[n-1] = 'i'
	}
}

type rule struct {
	suffix, repl string
}

var step2Rules = []rule{
	{"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"abli", "able"},
	{"entli", "ent"}, {"izer", "ize"}, {"ization", "ize"}, {"ational", "ate"},
	{"ation", "ate"}, {"ator", "ate"}, {"alism", "al"}, {"aliti", "al"},
	{"alli", "al"}, {"fulness", "ful"}, {"ousli", "ous"}, {"ousness", "ous"},
	{"iveness", "ive"}, {"iviti", "ive"}, {"biliti", "ble"}, {"bli", "ble"},
	{"ogist", "og"}, {"ogi", "og"}, {"fulli", "ful"}, {"lessli", "less"},
	{"li", ""},
}

// longestRule returns the rule whose suffix is the longest one ending the
// word. Snowball's "among" commits to the longest match: a failing
// condition does not fall back to a shorter suffix.
func (w *stemmer) longestRule(rules []rule) (rule, bool) {
	var best rule
	found := false
	for _, r := range rules {
		if (!found || len(r.suffix) > len(best.suffix)) && w.hasSuffix(r.suffix) {
			best, found = r, true
		}
	}
	return best, found
}

// suffixIn finds the longest rule whose suffix ends the word and where
// that suffix starts; ok is false when there is none or it starts before
// region (R1 or R2).
func (w *stemmer) suffixIn(rules []rule, region int) (r rule, start int, ok bool) {
	r, ok = w.longestRule(rules)
	if !ok {
		return rule{}, 0, false
	}
	start = len(w.b) - len(r.suffix)
	return r, start, start >= region
}

func (w *stemmer) step2() {
	r, start, ok := w.suffixIn(step2Rules, w.p1)
	if !ok {
		return
	}
	switch r.suffix {
	case "ogi":
		if start == 0 || w.b[start-1] != 'l' {
			return
		}
	case "li":
		if start == 0 || !strings.ContainsRune("cdeghkmnrt", w.b[start-1]) {
			return
		}
	}
	w.replaceSuffix(len(r.suffix), r.repl)
}

var step3Rules = []rule{
	{"tional", "tion"}, {"ational", "ate"}, {"alize", "al"}, {"icate", "ic"},
	{"iciti", "ic"}, {"ical", "ic"}, {"ful", ""}, {"ness", ""}, {"ative", ""},
}

func (w *stemmer) step3() {
	r, start, ok := w.suffixIn(step3Rules, w.p1)
	if !ok {
		return
	}
	if r.suffix == "ative" && start < w.p2 {
		return
	}
	w.replaceSuffix(len(r.suffix), r.repl)
}

var step4Suffixes = []rule{
	{"al", ""}, {"ance", ""}, {"ence", ""}, {"er", ""}, {"ic", ""}, {"able", ""},
	{"ible", ""}, {"ant", ""}, {"ement", ""}, {"ment", ""}, {"ent", ""},
	{"ism", ""}, {"ate", ""}, {"iti", ""}, {"ous", ""}, {"ive", ""}, {"ize", ""},
	{"ion", ""},
}

func (w *stemmer) step4() {
	r, start, ok := w.suffixIn(step4Suffixes, w.p2)
	if !ok {
		return
	}
	if r.suffix == "ion" && (start == 0 || (w.b[start-1] != 's' && w.b[start-1] != 't')) {
		return
	}
	w.b = w.b[:start]
}

func (w *stemmer) step5() {
	n := len(w.b)
	if n == 0 {
		return
	}
	start := n - 1
	switch w.b[start] {
	case 'e':
		if start >= w.p2 || (start >= w.p1 && !w.shortSyllableAt(start)) {
			w.b = w.b[:start]
		}
	case 'l':
		if start >= w.p2 && start > 0 && w.b[start-1] == 'l' {
			w.b = w.b[:start]
		}
	}
}
