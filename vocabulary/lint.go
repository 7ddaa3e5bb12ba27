package vocabulary

import (
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/nexus-harness/nexus/internal/yamljson"
)

// The G6/G7 rules of nexus-core's lint (digest §7.3.1) are regular
// expressions built from \b-delimited word lists:
//
//	distinctive  \b(NotebookEdit|BashOutput|...|mcp__plugin_[a-z0-9_]+|...|prompt_user)\b
//	call         \b(Skill|Agent)\s*\(
//	namespace    /(?:claude-nexus|opencode-nexus):
//	ambiguous    \b(Read|Write|Edit|Bash|Task|Monitor)\b
//	opencode     \b(edit|write|patch|multiedit|bash)\b
//	model (/i)   \b(opus|sonnet|haiku|gpt-[0-9][a-z0-9.-]*|claude-[0-9][a-z0-9.-]*)\b
//
// Running them through Go's regexp took about a third of `nexus validate`,
// so they are evaluated by one pass over the ASCII words of a file instead:
// with \b ASCII-based (as in JavaScript without the u flag), a \b-delimited
// literal matches exactly where a whole word equals it. lint_test.go keeps
// the expressions and checks the scanner against them.
var (
	distinctiveWords = wordSet("NotebookEdit", "BashOutput", "KillShell", "Glob", "Grep", "WebFetch", "WebSearch", "TodoWrite",
		"SendMessage", "TeamCreate", "AskUserQuestion", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "TaskStop",
		"TaskOutput", "subagent_type", "prompt_user")
	ambiguousWords = wordSet("Read", "Write", "Edit", "Bash", "Task", "Monitor")
	openCodeWords  = wordSet("edit", "write", "patch", "multiedit", "bash")
	callWords      = wordSet("Skill", "Agent")
	modelWords     = wordSet("opus", "sonnet", "haiku") // compared lower-cased
	namespaces     = [][]byte{[]byte("/claude-nexus:"), []byte("/opencode-nexus:")}
	lintMacro      = lazyRegexp(`\{\{([a-z_][a-z0-9_]*)([^}]*)\}\}`)
)

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// isWordByte is \b's notion of a word character.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// span is a match: byte offsets into the scanned text.
type span struct{ start, end int }

// words calls fn for every maximal run of word characters.
func words(text []byte, fn func(start, end int)) {
	for i := 0; i < len(text); {
		if !isWordByte(text[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && isWordByte(text[j]) {
			j++
		}
		fn(i, j)
		i = j
	}
}

// matchWords returns the words in set (plus, with mcpPlugin, the words
// mcp__plugin_ + [a-z0-9_]+).
func matchWords(text []byte, set map[string]bool, mcpPlugin bool) []span {
	var out []span
	words(text, func(i, j int) {
		w := text[i:j]
		if set[string(w)] || mcpPlugin && isMCPPlugin(w) {
			out = append(out, span{i, j})
		}
	})
	return out
}

func isMCPPlugin(w []byte) bool {
	rest, ok := bytes.CutPrefix(w, []byte("mcp__plugin_"))
	if !ok || len(rest) == 0 {
		return false
	}
	for _, c := range rest {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// matchCalls finds \b(Skill|Agent)\s*\( with JavaScript's \s (the same
// set ECMAScript's trim removes), not RE2's ASCII-only one.
func matchCalls(text []byte) []span {
	var out []span
	words(text, func(i, j int) {
		if !callWords[string(text[i:j])] {
			return
		}
		k := j
		for k < len(text) {
			r, n := utf8.DecodeRune(text[k:])
			if !jsTrimSpace(r) || r == utf8.RuneError {
				break
			}
			k += n
		}
		if k < len(text) && text[k] == '(' {
			out = append(out, span{i, k + 1})
		}
	})
	return out
}

func matchNamespaces(text []byte) []span {
	var out []span
	for _, ns := range namespaces {
		for i := 0; ; {
			j := bytes.Index(text[i:], ns)
			if j < 0 {
				break
			}
			out = append(out, span{i + j, i + j + len(ns)})
			i += j + len(ns)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].start < out[b].start })
	return out
}

// matchModels is the case-insensitive model pattern. "gpt-4o" style names
// run past the word: after "gpt-" or "claude-" and a digit the match takes
// the longest run of [a-z0-9.-] that still ends on a word boundary.
func matchModels(text []byte) []span {
	var out []span
	next := 0 // matches do not overlap: skip words inside the last one
	words(text, func(i, j int) {
		if i < next {
			return
		}
		w := asciiLower(text[i:j])
		if modelWords[w] {
			out = append(out, span{i, j})
			return
		}
		if w != "gpt" && w != "claude" {
			return
		}
		if j+1 >= len(text) || text[j] != '-' || text[j+1] < '0' || text[j+1] > '9' {
			return
		}
		e := j + 2
		for e < len(text) && isModelByte(text[e]) {
			e++
		}
		for ; e > j+1; e-- {
			if atBoundary(text, e) {
				out = append(out, span{i, e})
				next = e
				return
			}
		}
	})
	return out
}

func isModelByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-'
}

// atBoundary is \b at offset e (e > 0).
func atBoundary(text []byte, e int) bool {
	after := e < len(text) && isWordByte(text[e])
	return isWordByte(text[e-1]) != after
}

func asciiLower(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return string(out)
}

// lintFile is one file in G6/G7's scope.
type lintFile struct {
	rel  string
	raw  []byte
	doc  *yamljson.Doc // nil for body.md or YAML that did not parse
	body bool
}

// lintFiles lists the files nexus-core's lint scans: agents/*/meta.yml and
// body.md, skills/*/meta.yml and body.md, and vocabulary/*.yml except
// capabilities.yml (its prose names operations in plain English on purpose).
func lintFiles(d *Distribution) []lintFile {
	var out []lintFile
	for _, m := range d.Metas {
		for _, rel := range []string{m.File, m.BodyFile()} {
			raw, err := d.ReadFile(rel)
			if err != nil {
				continue // G9 reports missing files
			}
			f := lintFile{rel: rel, raw: raw, body: strings.HasSuffix(rel, "/body.md")}
			if src, ok := d.Sources[rel]; ok {
				f.doc = src.Doc
			}
			out = append(out, f)
		}
	}
	names, _ := fs.ReadDir(d.Dist.FS, "vocabulary")
	for _, e := range names {
		if e.IsDir() || filepath.Ext(e.Name()) != ".yml" || e.Name() == "capabilities.yml" {
			continue
		}
		rel := "vocabulary/" + e.Name()
		raw, err := d.ReadFile(rel)
		if err != nil {
			continue
		}
		f := lintFile{rel: rel, raw: raw}
		if src, ok := d.Sources[rel]; ok {
			f.doc = src.Doc
		}
		out = append(out, f)
	}
	return out
}

// LintHarness runs G6: prompt sources must not name a particular harness's
// tools, call syntax or slash-command namespace. In body.md, heredoc
// interiors and macro arguments are masked first and only the distinctive
// names are checked (plain words such as "Read" are prose there); meta.yml
// and vocabulary files are scanned raw, ambiguous names included. A macro
// whose id is not an invocation in vocabulary/invocations.yml is a warning.
func LintHarness(d *Distribution) []Finding {
	invocations, invOK := idSet(d, "invocations.yml", "invocations")
	var out []Finding
	for _, f := range lintFiles(d) {
		text := f.raw
		if f.body {
			masked, macros := maskBody(f.raw)
			text = masked
			if invOK {
				for _, m := range macros {
					if !invocations[m.id] {
						out = append(out, f.finding(SeverityWarning, m.offset, "G6",
							fmt.Sprintf("macro {{%s ...}} names no invocation in vocabulary/invocations.yml; a consumer cannot expand it", m.id)))
					}
				}
			}
		}
		out = append(out, f.report(matchWords(text, distinctiveWords, true), "G6", "harness-specific tool name %q; describe the capability instead")...)
		out = append(out, f.report(matchCalls(text), "G6", "harness-specific call syntax %q; use an invocation macro instead")...)
		out = append(out, f.report(matchNamespaces(text), "G6", "harness slash-command namespace %q; prompts must stay harness-neutral")...)
		if !f.body {
			out = append(out, f.report(matchWords(text, ambiguousWords, false), "G6", "harness tool name %q (ambiguous names are forbidden outside body.md prose)")...)
			out = append(out, f.report(matchWords(text, openCodeWords, false), "G6", "OpenCode tool name %q; describe the capability instead")...)
		}
	}
	return out
}

// LintModels runs G7: no concrete model names (any case) in the same files,
// unmasked; roles choose a model through model_tier.
func LintModels(d *Distribution) []Finding {
	var out []Finding
	for _, f := range lintFiles(d) {
		out = append(out, f.report(matchModels(f.raw), "G7", "concrete model name %q; use model_tier (high | standard) instead")...)
	}
	return out
}

func (f lintFile) report(spans []span, gate, format string) []Finding {
	var out []Finding
	for _, s := range spans {
		// Masking keeps byte offsets, so the match is quoted from the raw file.
		out = append(out, f.finding(SeverityError, s.start, gate, fmt.Sprintf(format, f.raw[s.start:s.end])))
	}
	return out
}

func (f lintFile) finding(sev Severity, offset int, gate, msg string) Finding {
	line, col := lineCol(f.raw, offset)
	path := "$"
	if f.doc != nil {
		path = PointerToPath(pointerAt(f.doc, yamljson.Pos{Line: line, Col: col}))
	}
	return Finding{Severity: sev, File: f.rel, Line: line, Col: col, Path: path, Gate: gate, Message: msg}
}

// pointerAt returns the pointer of the last value that starts at or before
// pos — the value a match inside a YAML file belongs to.
func pointerAt(doc *yamljson.Doc, pos yamljson.Pos) string {
	best, bestPos := "", yamljson.Pos{}
	for ptr, p := range doc.Positions {
		if p.Line > pos.Line || (p.Line == pos.Line && p.Col > pos.Col) {
			continue
		}
		if p.Line > bestPos.Line || (p.Line == bestPos.Line && p.Col > bestPos.Col) ||
			(p == bestPos && len(ptr) > len(best)) {
			best, bestPos = ptr, p
		}
	}
	return best
}

type macro struct {
	id     string
	offset int
}

// maskBody prepares a body.md for G6 the way nexus-core does: every heredoc
// interior (>>LABEL ... <<LABEL) is blanked, then every macro's inside
// ({{id args}}), and the macros' ids are collected. Blanking replaces each
// byte except '\n' with a space, so offsets, lines and columns are those of
// the original text.
func maskBody(src []byte) ([]byte, []macro) {
	s := append([]byte(nil), src...)
	maskHeredocs(s)
	var macros []macro
	for _, m := range lintMacro().FindAllSubmatchIndex(s, -1) {
		macros = append(macros, macro{id: string(s[m[2]:m[3]]), offset: m[0]})
		blank(s[m[0]+2 : m[1]-2])
	}
	return s, macros
}

// maskHeredocs blanks what /(>>([A-Z][A-Z0-9_]*)([\s\S]*?)<<\1/g matches
// as group 2 in JavaScript. RE2 has no back-references, so each ">>" is
// followed by hand: the label is the longest run of [A-Z][A-Z0-9_]*, and a
// backtracking engine would shorten it one character at a time until some
// later "<<label" closes it, taking the nearest such closer.
func maskHeredocs(s []byte) {
	for i := 0; i < len(s); {
		j := bytes.Index(s[i:], []byte(">>"))
		if j < 0 {
			return
		}
		p := i + j
		label := heredocLabel(s[p+2:])
		if len(label) == 0 {
			i = p + 1
			continue
		}
		// For each closer "<<" after the label's first character, the
		// longest usable label is the common prefix with the label, bounded
		// by how much of the label precedes the closer. The longest usable
		// length wins; its first closer is the nearest one.
		bestL, bestQ := 0, -1
		for q := p + 3; q < len(s); {
			k := bytes.Index(s[q:], []byte("<<"))
			if k < 0 {
				break
			}
			q += k
			l := commonPrefix(s[q+2:], label)
			l = min(l, q-(p+2))
			if l > bestL {
				bestL, bestQ = l, q
				if l == len(label) {
					break
				}
			}
			q++
		}
		if bestQ < 0 {
			i = p + 1
			continue
		}
		blank(s[p+2+bestL : bestQ])
		i = bestQ + 2 + bestL
	}
}

func heredocLabel(b []byte) []byte {
	if len(b) == 0 || b[0] < 'A' || b[0] > 'Z' {
		return nil
	}
	n := 1
	for n < len(b) && (b[n] >= 'A' && b[n] <= 'Z' || b[n] >= '0' && b[n] <= '9' || b[n] == '_') {
		n++
	}
	return b[:n]
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func blank(b []byte) {
	for i, c := range b {
		if c != '\n' {
			b[i] = ' '
		}
	}
}

// firstInvalidUTF8 returns the offset of the first byte that is not part of
// a valid UTF-8 sequence, or -1.
func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}
