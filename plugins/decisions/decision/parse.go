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
	rationale, ok := sectionBody(rs, "Decision")
	if !ok {
		return nil, fail(filename, RuleDecisionMissing, filename+": "+msgDecisionHeader)
	}
	var rejected []Rejected
	if section, ok := sectionBody(rs, "Rejected Alternatives"); ok && section != "" {
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

// headingEnd matches ^##\s+<name>\s*$ at line start p and returns where the
// match ends.
func headingEnd(rs []rune, p int, name []rune) (int, bool) {
	if p+2 > len(rs) || rs[p] != '#' || rs[p+1] != '#' || !isLineStart(rs, p) {
		return 0, false
	}
	q := p + 2
	e := spaceRunEnd(rs, q)
	if e == q || e+len(name) > len(rs) {
		return 0, false
	}
	for i, r := range name {
		if rs[e+i] != r {
			return 0, false
		}
	}
	q = e + len(name)
	return dollarAfterSpaces(rs, q)
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

// nextH2 finds the next ^##\s+ at or after from.
func nextH2(rs []rune, from int) int {
	for p := from; p+2 < len(rs); p++ {
		if rs[p] == '#' && rs[p+1] == '#' && pytext.IsSpace(rs[p+2]) && isLineStart(rs, p) {
			return p
		}
	}
	return len(rs)
}

// sectionBody returns the stripped text of the first "## <name>" section:
// from its heading to the next ## heading or the end of the body.
func sectionBody(rs []rune, name string) (string, bool) {
	nr := []rune(name)
	for p := 0; p < len(rs); p++ {
		end, ok := headingEnd(rs, p, nr)
		if !ok {
			continue
		}
		stop := nextH2(rs, end)
		return pytext.Strip(string(rs[end:stop])), true
	}
	return "", false
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
