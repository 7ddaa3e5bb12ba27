// Package tags finds nexus-core bracket tags ([plan], [d], [rule:name], ...)
// in a user message. The tag table comes from the distribution's
// vocabulary/tags.yml (through the manifest); nothing here names a tag.
//
// Detection follows nexus-core's recommended algorithm: bracket tokens
// `[name]` or `[name:suffix]`; a token equal to a trigger is that tag (so
// [m:gc] is the m-gc tag, never [m] with a variant); otherwise the suffix
// must be one of the base tag's variants, or the base must accept any ("*").
// Tokens inside fenced code, inline code, block quotes or double-quoted text
// are ignored, as are backslash-escaped ones. One skill is active at a time
// (the last skill tag wins); inline actions run in message order, each with
// the text after it up to the next tag.
package tags

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/nexus-harness/nexus/vocabulary"
)

// Match is one tag that fires.
type Match struct {
	Tag     vocabulary.Tag
	Token   string // as written: "[plan:auto]"
	Variant string // "auto", or the rule name of [rule:name]
	Offset  int    // byte offset of Token in the message
	// Text is the message text after the token up to the next firing tag
	// (trimmed): the argument of an inline action.
	Text string
}

// IsSkill reports whether the tag activates a skill.
func (m Match) IsSkill() bool { return m.Tag.Type == vocabulary.TagSkill }

// Ignored is a bracket token that does not fire, with the reason.
type Ignored struct {
	Token  string
	Offset int
	Reason string
}

// Result is what a message triggers.
type Result struct {
	// Skill is the skill tag that is active after this message (the last
	// skill tag), or nil.
	Skill *Match
	// Actions are the inline actions in message order.
	Actions []Match
	// Fired lists every firing tag in message order (skills included,
	// also those replaced by a later skill tag).
	Fired   []Match
	Ignored []Ignored
}

// Detector finds the tags of one distribution.
type Detector struct {
	tags      []vocabulary.Tag
	byTrigger map[string]vocabulary.Tag
}

// New builds a detector from tags.yml entries (vocabulary.Core.Tags()).
func New(tags []vocabulary.Tag) *Detector {
	d := &Detector{tags: tags, byTrigger: map[string]vocabulary.Tag{}}
	for _, t := range tags {
		d.byTrigger[t.Trigger] = t
	}
	return d
}

// Tags returns the table the detector uses.
func (d *Detector) Tags() []vocabulary.Tag { return d.tags }

// token is nexus-core's bracket token pattern (digest §4.6 step 2).
var token = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[([a-z][a-z0-9-]*)(?::([^\]]+))?\]`) })

// Detect finds the tags a message triggers.
func (d *Detector) Detect(msg string) Result {
	mask := maskText(msg)
	var res Result
	for _, loc := range token().FindAllStringSubmatchIndex(msg, -1) {
		start, end := loc[0], loc[1]
		tok := msg[start:end]
		if why := mask.reason(start, end); why != "" {
			res.Ignored = append(res.Ignored, Ignored{Token: tok, Offset: start, Reason: why})
			continue
		}
		if start > 0 && msg[start-1] == '\\' {
			res.Ignored = append(res.Ignored, Ignored{Token: tok, Offset: start, Reason: "escaped with a backslash"})
			continue
		}
		m, why := d.resolve(msg, loc)
		if why != "" {
			res.Ignored = append(res.Ignored, Ignored{Token: tok, Offset: start, Reason: why})
			continue
		}
		res.Fired = append(res.Fired, m)
	}
	for i := range res.Fired {
		from := res.Fired[i].Offset + len(res.Fired[i].Token)
		to := len(msg)
		if i+1 < len(res.Fired) {
			to = res.Fired[i+1].Offset
		}
		res.Fired[i].Text = strings.TrimSpace(msg[from:to])
	}
	for i := range res.Fired {
		m := res.Fired[i]
		if m.IsSkill() {
			if res.Skill != nil {
				res.Ignored = append(res.Ignored, Ignored{Token: res.Skill.Token, Offset: res.Skill.Offset,
					Reason: fmt.Sprintf("replaced by the later skill tag %s (one skill is active at a time)", m.Token)})
			}
			mm := m
			res.Skill = &mm
			continue
		}
		res.Actions = append(res.Actions, m)
	}
	return res
}

func (d *Detector) resolve(msg string, loc []int) (Match, string) {
	tok := msg[loc[0]:loc[1]]
	if t, ok := d.byTrigger[tok]; ok {
		return Match{Tag: t, Token: tok, Offset: loc[0]}, ""
	}
	name := msg[loc[2]:loc[3]]
	base, ok := d.byTrigger["["+name+"]"]
	if !ok {
		return Match{}, fmt.Sprintf("no tag %s in vocabulary/tags.yml", "["+name+"]")
	}
	if loc[4] < 0 {
		return Match{}, "not a trigger" // unreachable: [name] equals its trigger
	}
	suffix := msg[loc[4]:loc[5]]
	for _, v := range base.Variants {
		if v == "*" || v == suffix {
			return Match{Tag: base, Token: tok, Variant: suffix, Offset: loc[0]}, ""
		}
	}
	if len(base.Variants) == 0 {
		return Match{}, fmt.Sprintf("tag %s takes no variant", base.Trigger)
	}
	return Match{}, fmt.Sprintf("%q is not a variant of %s (variants: %s)", suffix, base.Trigger, strings.Join(base.Variants, ", "))
}

// --- ignored regions -----------------------------------------------------

type region struct {
	start, end int
	reason     string
}

type textMask []region

func (m textMask) reason(start, end int) string {
	for _, r := range m {
		if start < r.end && end > r.start {
			return r.reason
		}
	}
	return ""
}

// maskText finds the regions whose tags never fire: fenced code blocks,
// inline code spans, block-quote lines and double-quoted text.
func maskText(msg string) textMask {
	var mask textMask
	var open struct {
		on    bool
		char  byte
		n     int
		start int
	}
	lineStart := 0
	var plain []region // line spans outside fences
	for lineStart <= len(msg) {
		lineEnd := strings.IndexByte(msg[lineStart:], '\n')
		if lineEnd < 0 {
			lineEnd = len(msg)
		} else {
			lineEnd += lineStart
		}
		line := msg[lineStart:lineEnd]
		ch, n, rest := fence(line)
		switch {
		case open.on:
			if ch == open.char && n >= open.n && strings.TrimSpace(rest) == "" {
				mask = append(mask, region{open.start, lineEnd, "inside fenced code"})
				open.on = false
			}
		case n > 0 && !(ch == '`' && strings.ContainsRune(rest, '`')):
			open.on, open.char, open.n, open.start = true, ch, n, lineStart
		default:
			trimmed := strings.TrimLeft(line, " \t")
			if strings.HasPrefix(trimmed, ">") {
				mask = append(mask, region{lineStart, lineEnd, "inside quoted text"})
			} else {
				plain = append(plain, region{start: lineStart, end: lineEnd})
			}
		}
		if lineEnd == len(msg) {
			break
		}
		lineStart = lineEnd + 1
	}
	if open.on {
		mask = append(mask, region{open.start, len(msg), "inside fenced code"})
	}
	for _, p := range plain {
		mask = append(mask, inlineRegions(msg, p.start, p.end)...)
	}
	return mask
}

// fence reports a code fence opening a line: up to three spaces, then at
// least three backticks or tildes.
func fence(line string) (byte, int, string) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0, ""
	}
	c := line[i]
	j := i
	for j < len(line) && line[j] == c {
		j++
	}
	if j-i < 3 {
		return 0, 0, ""
	}
	return c, j - i, line[j:]
}

// inlineRegions masks code spans and double-quoted text within one line.
func inlineRegions(msg string, start, end int) []region {
	var out []region
	i := start
	quoteOpen := -1
	var quoteClose string
	for i < end {
		c := msg[i]
		switch {
		case c == '\\' && i+1 < end:
			i += 2
			continue
		case c == '`':
			n := 0
			for i+n < end && msg[i+n] == '`' {
				n++
			}
			// The span closes at the next run of exactly n backticks.
			j := i + n
			closed := -1
			for j < end {
				if msg[j] != '`' {
					j++
					continue
				}
				m := 0
				for j+m < end && msg[j+m] == '`' {
					m++
				}
				if m == n {
					closed = j + m
					break
				}
				j += m
			}
			if closed < 0 {
				i += n // literal backticks
				continue
			}
			out = append(out, region{i, closed, "inside inline code"})
			i = closed
			continue
		case quoteOpen < 0 && (c == '"' || strings.HasPrefix(msg[i:end], "“")):
			quoteOpen = i
			if c == '"' {
				quoteClose = `"`
				i++
			} else {
				quoteClose = "”"
				i += len("“")
			}
			continue
		case quoteOpen >= 0 && strings.HasPrefix(msg[i:end], quoteClose):
			i += len(quoteClose)
			out = append(out, region{quoteOpen, i, "inside quoted text"})
			quoteOpen = -1
			continue
		}
		i++
	}
	return out
}
