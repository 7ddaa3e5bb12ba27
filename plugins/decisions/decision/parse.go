package decision

import (
	"strings"
	"unicode/utf8"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyyaml"
)

// The reference's exact failure messages (the file name is prepended).
const (
	msgMissingFence   = "missing YAML frontmatter (decisions v2 requires a leading `---` fence)"
	msgUnterminated   = "unterminated YAML frontmatter"
	msgInvalidYAML    = "invalid YAML frontmatter: "
	msgNotMapping     = "frontmatter must be a mapping, got "
	msgH1             = "missing or malformed H1 (expected `# NNN \u2014 Title` with em-dash separator)"
	msgDecisionHeader = "missing `## Decision` section (v2 does not accept `## Rationale` \u2014 Phase 3 migration renames legacy files; the parser itself stays strict)"
)

// derivedKeys are model fields filled from the body and the file name; the
// reference passes them as keywords next to the frontmatter, so a
// frontmatter key of the same name is a TypeError.
var derivedKeys = []string{"rejected", "num", "title", "rationale", "body", "content"}

// Parse reads a decision file. filename (a base name such as
// "042-use-postgres.md") gives the number and prefixes error messages.
// Every rule of the reference parser applies, in its order; the first
// failure is returned as a *ParseError.
func Parse(text, filename string) (*Decision, error) {
	if !utf8.ValidString(text) {
		return nil, fail(filename, RuleEncoding, filename+": not valid UTF-8 text")
	}
	if !strings.HasPrefix(text, "---\n") {
		return nil, fail(filename, RuleFrontmatterMissing, filename+": "+msgMissingFence)
	}
	end := strings.Index(text[4:], "\n---\n")
	if end < 0 {
		return nil, fail(filename, RuleFrontmatterUnterm, filename+": "+msgUnterminated)
	}
	end += 4
	front, body := text[4:end], text[end+5:]

	loaded, err := pyyaml.Load(front)
	if err != nil {
		if ve, ok := err.(*pyyaml.ValueError); ok {
			return nil, fail(filename, RuleYAMLValue, ve.Msg)
		}
		return nil, fail(filename, RuleYAMLInvalid, filename+": "+msgInvalidYAML+err.Error())
	}
	fm, ok := loaded.(*pyyaml.Mapping)
	if loaded == nil {
		fm, ok = &pyyaml.Mapping{}, true
	}
	if !ok {
		return nil, fail(filename, RuleNotMapping, filename+": "+msgNotMapping+pyyaml.TypeName(loaded))
	}

	rs := []rune(body)
	title, ok := findH1(rs)
	if !ok {
		return nil, fail(filename, RuleH1Missing, filename+": "+msgH1)
	}
	num := 0
	if n, ok, err := ExtractNumber(filename); err != nil {
		return nil, fail(filename, RuleFieldType, err.Error())
	} else if ok {
		num = n
	}
	rationale, section, ok := splitBody(body)
	if !ok {
		return nil, fail(filename, RuleDecisionMissing, filename+": "+msgDecisionHeader)
	}
	var rejected []Rejected
	if section != "" {
		for _, alt := range splitAlternatives(section) {
			if alt.Name == "" {
				return nil, &ParseError{File: filename, Rule: RuleRejectedName, Fields: []FieldError{{
					Loc: []any{"name"}, Type: "string_too_short", Msg: "String should have at least 1 character", rule: RuleRejectedName,
				}}}
			}
			rejected = append(rejected, alt)
		}
	}

	for _, dk := range derivedKeys {
		for _, k := range fm.Keys {
			if k == dk {
				return nil, fail(filename, RuleDerivedKey, "Decision() got multiple values for keyword argument '"+dk+"'")
			}
		}
	}
	for _, k := range fm.Keys {
		if _, ok := k.(string); !ok {
			return nil, fail(filename, RuleNonStringKey, "keywords must be strings")
		}
	}

	d, ferrs := validate(fm)
	if len(ferrs) > 0 {
		return nil, validationError(filename, ferrs)
	}
	d.Rejected = rejected
	d.Num, d.Title, d.Rationale, d.Body, d.Content = num, title, rationale, body, text
	if ferr := validateModel(d); ferr != nil {
		return nil, validationError(filename, []FieldError{*ferr})
	}
	return d, nil
}

func isLineStart(rs []rune, i int) bool { return i == 0 || rs[i-1] == '\n' }

func spaceRunEnd(rs []rune, i int) int {
	for i < len(rs) && pytext.IsSpace(rs[i]) {
		i++
	}
	return i
}

// findH1 finds the first match of the multiline pattern
// ^#\s+(\d+)\s+\u2014\s+(.+)$ and returns group 2 stripped. The title must
// not be blank: a blank one would not survive formatting (nexus rejects it
// where the reference accepts it).
func findH1(rs []rune) (string, bool) {
	for p := 0; p < len(rs); p++ {
		if rs[p] != '#' || !isLineStart(rs, p) {
			continue
		}
		q := p + 1
		if e := spaceRunEnd(rs, q); e == q {
			continue
		} else {
			q = e
		}
		e := q
		for e < len(rs) && pytext.IsDecimal(rs[e]) {
			e++
		}
		if e == q {
			continue
		}
		q = e
		if e = spaceRunEnd(rs, q); e == q {
			continue
		}
		q = e
		if q >= len(rs) || rs[q] != '\u2014' {
			continue
		}
		q++
		e = spaceRunEnd(rs, q)
		// \s+ is greedy and (.+) needs one character other than a newline:
		// give whitespace back until that holds.
		for k := e - q; k >= 1; k-- {
			s := q + k
			if s >= len(rs) || rs[s] == '\n' {
				continue
			}
			end := s
			for end < len(rs) && rs[end] != '\n' {
				end++
			}
			title := pytext.Strip(string(rs[s:end]))
			if title == "" {
				return "", false
			}
			return title, true
		}
	}
	return "", false
}

// dollarAfterSpaces matches \s*$ at q: the greedy run of whitespace backs
// off to the last point where $ holds (the end, or just before a newline).
func dollarAfterSpaces(rs []rune, q int) (int, bool) {
	e := spaceRunEnd(rs, q)
	if e == len(rs) {
		return e, true
	}
	for j := e - 1; j >= q; j-- {
		if rs[j] == '\n' {
			return j, true
		}
	}
	return 0, false
}

// matchAlternative matches ^###\s+(.+?)\s*$ at line start p, returning the
// group bounds and the end of the match.
func matchAlternative(rs []rune, p int) (gs, ge, end int, ok bool) {
	if p+3 > len(rs) || rs[p] != '#' || rs[p+1] != '#' || rs[p+2] != '#' || !isLineStart(rs, p) {
		return 0, 0, 0, false
	}
	q := p + 3
	e := spaceRunEnd(rs, q)
	for k := e - q; k >= 1; k-- {
		s := q + k
		if s >= len(rs) || rs[s] == '\n' {
			continue
		}
		// (.+?) is lazy: the shortest group after which \s*$ holds.
		for m := s + 1; ; m++ {
			if end, ok := dollarAfterSpaces(rs, m); ok {
				return s, m, end, true
			}
			if m >= len(rs) || rs[m] == '\n' {
				break
			}
		}
	}
	return 0, 0, 0, false
}

// splitAlternatives is re.split(r"^###\s+(.+?)\s*$", section, flags=re.M)
// read as (name, reason) pairs; text before the first ### line is dropped.
func splitAlternatives(section string) []Rejected {
	rs := []rune(section)
	var out []Rejected
	prevEnd := -1
	var name string
	flush := func(upto int) {
		if prevEnd < 0 {
			return
		}
		reason := pytext.Strip(string(rs[prevEnd:upto]))
		alt := Rejected{Name: name}
		if reason != "" {
			alt.Reason = &reason
		}
		out = append(out, alt)
	}
	for p := 0; p < len(rs); p++ {
		gs, ge, end, ok := matchAlternative(rs, p)
		if !ok {
			continue
		}
		flush(p)
		name = pytext.Strip(string(rs[gs:ge]))
		prevEnd = end
		if end > p {
			p = end - 1
		}
	}
	flush(len(rs))
	return out
}

// splitBody splits the body into the rationale and the rejected section
// the way current Nauro does (nauro-core 1.14): line by line, fence-aware,
// so a "## " line inside a code block is text, not a heading. Outside
// fences the first line that is exactly "## Decision" (trailing
// whitespace ignored) opens the rationale, and after it the last line that
// is exactly "## Rejected Alternatives" starts the rejected section; any
// other "##" heading stays part of the text around it. ok is false when
// there is no Decision anchor.
func splitBody(body string) (rationale, rejected string, ok bool) {
	lines := strings.Split(body, "\n")
	decision, rej := -1, -1
	var fence byte // 0, '`' or '~': the character of the open fence
	for i, line := range lines {
		if c := fenceChar(line); c != 0 {
			switch {
			case fence == 0:
				fence = c
			case fence == c && onlyChar(pytext.Strip(line), c):
				fence = 0
			}
			continue
		}
		if fence != 0 {
			continue
		}
		switch pytext.RStrip(line) {
		case "## Decision":
			if decision < 0 {
				decision = i
			}
		case "## Rejected Alternatives":
			if decision >= 0 {
				rej = i
			}
		}
	}
	if decision < 0 {
		return "", "", false
	}
	end := len(lines)
	if rej >= 0 {
		end = rej
		rejected = pytext.Strip(strings.Join(lines[rej+1:], "\n"))
	}
	rationale = pytext.Strip(strings.Join(lines[decision+1:end], "\n"))
	return rationale, rejected, true
}

// fenceChar returns the fence character of a line whose stripped text
// starts with three backticks or three tildes (indentation does not
// matter, unlike CommonMark), else 0.
func fenceChar(line string) byte {
	t := pytext.Strip(line)
	switch {
	case strings.HasPrefix(t, "```"):
		return '`'
	case strings.HasPrefix(t, "~~~"):
		return '~'
	}
	return 0
}

func onlyChar(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != c {
			return false
		}
	}
	return true
}
