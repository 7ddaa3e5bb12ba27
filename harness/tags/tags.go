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
	"strings"

	"github.com/nexus-harness/nexus/vocabulary"
)

// Match is one tag that fires.
type Match struct {
	Tag     *vocabulary.Tag // the detector's entry: read-only
	Token   string          // as written: "[plan:auto]"
	Variant string          // "auto", or the rule name of [rule:name]
	Offset  int             // byte offset of Token in the message
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

// MaxScanBytes is how much of a message is read for tags: its first 256
// KiB. Detection is linear, but the ignored regions of a message full of
// quotes or code spans cost tens of bytes of memory per byte: a 9 MiB
// prompt of backtick spans took 1 GB, one of 2.4 million [d] tags 290 MB.
// The bracket tokens past the window are only counted (Result.Unread); an
// inline action's text still runs to the next tag or the end of the message.
const MaxScanBytes = 256 << 10

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
	// Unread counts the bracket tokens past MaxScanBytes, which were not
	// read (0 when the message fits, or nothing there looks like a tag).
	Unread int
}

// Detector finds the tags of one distribution.
type Detector struct {
	tags      []vocabulary.Tag
	byTrigger map[string]*vocabulary.Tag // into own, a private copy of tags
}

// New builds a detector from tags.yml entries (vocabulary.Core.Tags()).
func New(tags []vocabulary.Tag) *Detector {
	own := append([]vocabulary.Tag(nil), tags...)
	d := &Detector{tags: tags, byTrigger: make(map[string]*vocabulary.Tag, len(own))}
	for i := range own {
		d.byTrigger[own[i].Trigger] = &own[i]
	}
	return d
}

// Tags returns the table the detector uses.
func (d *Detector) Tags() []vocabulary.Tag { return d.tags }

// tokens walks the bracket tokens of a message in order, as nexus-core's
// pattern \[([a-z][a-z0-9-]*)(?::([^\]]+))?\] finds them (digest §4.6
// step 2; FuzzDetect checks the two agree), without allocating: a long
// message of tags costs one pass and no garbage.
type tokens struct {
	msg   string
	at    int // where the search goes on
	close int // the first ']' at or after at, len(msg) when there is none
}

// next returns the next token: loc holds its start and end, the name's
// start and end, and the suffix's start and end (-1, -1 without one).
func (k *tokens) next(loc *[6]int) bool {
	msg := k.msg
	for k.at < len(msg) {
		i := strings.IndexByte(msg[k.at:], '[')
		if i < 0 {
			k.at = len(msg)
			return false
		}
		p := k.at + i
		k.at = p + 1
		j := p + 1
		if j >= len(msg) || msg[j] < 'a' || msg[j] > 'z' {
			continue
		}
		for j++; j < len(msg) && (msg[j] >= 'a' && msg[j] <= 'z' || msg[j] >= '0' && msg[j] <= '9' || msg[j] == '-'); j++ {
		}
		if j >= len(msg) {
			continue
		}
		switch msg[j] {
		case ']':
			*loc = [6]int{p, j + 1, p + 1, j, -1, -1}
			k.at = j + 1
			return true
		case ':':
			// The suffix runs to the first ']' after the colon.
			if k.close < j+1 {
				c := strings.IndexByte(msg[j+1:], ']')
				if c < 0 {
					k.close = len(msg)
				} else {
					k.close = j + 1 + c
				}
			}
			if k.close == len(msg) || k.close == j+1 {
				continue
			}
			*loc = [6]int{p, k.close + 1, p + 1, j, j + 1, k.close}
			k.at = k.close + 1
			return true
		}
	}
	return false
}

// Detect finds the tags a message triggers. Its time is linear in the
// message: one pass for the ignored regions, one for the tokens (each
// looked up in the sorted regions from where the previous one stopped), one
// for the action texts.
func (d *Detector) Detect(msg string) Result {
	var res Result
	// Only the window is read for tags (MaxScanBytes); the text is judged
	// as if it ended there.
	window := msg
	var loc [6]int
	if len(msg) > MaxScanBytes {
		window = msg[:MaxScanBytes]
		for toks := (tokens{msg: msg, at: MaxScanBytes, close: -1}); toks.next(&loc); {
			res.Unread++
		}
	}
	mask := maskText(window)
	// Counting the tokens first (no allocation) sizes Fired once: a
	// message of many tags would otherwise spend most of its time growing
	// it and collecting the garbage.
	n := 0
	for toks := (tokens{msg: window, close: -1}); toks.next(&loc); {
		n++
	}
	if n > 0 {
		res.Fired = make([]Match, 0, n)
	}
	toks := tokens{msg: window, close: -1}
	for toks.next(&loc) {
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
		m, why := d.resolve(msg, &loc)
		if why != "" {
			res.Ignored = append(res.Ignored, Ignored{Token: tok, Offset: start, Reason: why})
			continue
		}
		res.Fired = append(res.Fired, m)
	}
	skills := 0
	for i := range res.Fired {
		from := res.Fired[i].Offset + len(res.Fired[i].Token)
		to := len(msg)
		if i+1 < len(res.Fired) {
			to = res.Fired[i+1].Offset
		}
		res.Fired[i].Text = strings.TrimSpace(msg[from:to])
		if res.Fired[i].IsSkill() {
			skills++
		}
	}
	res.Actions = make([]Match, 0, len(res.Fired)-skills)
	for i := range res.Fired {
		m := res.Fired[i]
		if m.IsSkill() {
			if res.Skill != nil {
				res.Ignored = append(res.Ignored, Ignored{Token: res.Skill.Token, Offset: res.Skill.Offset,
					Reason: fmt.Sprintf("replaced by the later skill tag %s (one skill is active at a time)", m.Token)})
			}
			res.Skill = &res.Fired[i]
			continue
		}
		res.Actions = append(res.Actions, m)
	}
	if len(res.Actions) == 0 {
		res.Actions = nil
	}
	if res.Skill != nil {
		mm := *res.Skill
		res.Skill = &mm
	}
	return res
}

func (d *Detector) resolve(msg string, loc *[6]int) (Match, string) {
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

// region is a span of the message whose tags never fire. The regions of a
// mask do not overlap: a quoted text holding code spans is stored as the
// pieces between them. rank orders the reasons when a token crosses
// several regions: the first line-level region (fenced code, block quote)
// wins, else the first inline one in the order it was found, which is how
// the reasons have always been chosen.
type region struct {
	start, end int
	reason     string
	rank       int
}

// inlineRank puts every inline region after every line-level one.
const inlineRank = 1 << 40

// textMask holds the regions in message order; reason walks them with a
// cursor, so asking about the tokens in message order costs one pass.
type textMask struct {
	rs   []region
	next int // rs[:next] end before the last token asked about
	seq  int // the next rank
}

// reason returns why the token at [start, end) does not fire ("" when it
// is outside every region). Calls must come in increasing start order.
func (m *textMask) reason(start, end int) string {
	for m.next < len(m.rs) && m.rs[m.next].end <= start {
		m.next++
	}
	why, rank := "", -1
	for i := m.next; i < len(m.rs) && m.rs[i].start < end; i++ {
		if rank < 0 || m.rs[i].rank < rank {
			why, rank = m.rs[i].reason, m.rs[i].rank
		}
	}
	return why
}

func (m *textMask) add(start, end int, reason string, rank int) {
	m.rs = append(m.rs, region{start, end, reason, rank})
}

// maskText finds the regions whose tags never fire: fenced code blocks,
// inline code spans, block-quote lines and double-quoted text. They come
// out in message order: a line's inline regions are added when the line is
// read, and a fence's region (which starts after every earlier line) when
// it closes.
func maskText(msg string) *textMask {
	mask := &textMask{}
	var open struct {
		on    bool
		char  byte
		n     int
		start int
	}
	var runs backtickRuns
	lineStart := 0
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
				mask.add(open.start, lineEnd, "inside fenced code", mask.seq)
				mask.seq++
				open.on = false
			}
		case n > 0 && !(ch == '`' && strings.ContainsRune(rest, '`')):
			open.on, open.char, open.n, open.start = true, ch, n, lineStart
		default:
			trimmed := strings.TrimLeft(line, " \t")
			if strings.HasPrefix(trimmed, ">") {
				mask.add(lineStart, lineEnd, "inside quoted text", mask.seq)
				mask.seq++
			} else {
				mask.inlineRegions(msg, lineStart, lineEnd, &runs)
			}
		}
		if lineEnd == len(msg) {
			break
		}
		lineStart = lineEnd + 1
	}
	if open.on {
		mask.add(open.start, len(msg), "inside fenced code", mask.seq)
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

// backtickRuns indexes the maximal runs of backticks of one line, so that
// "the next run of exactly n backticks" is found without rescanning the
// line (a line of many unmatched runs would otherwise cost its length
// squared).
type backtickRuns struct {
	pos, n []int         // run k starts at pos[k] and has n[k] backticks
	byLen  map[int][]int // run length -> run indexes, ascending
	cursor map[int]int   // run length -> first index in byLen not yet passed
}

func (r *backtickRuns) index(msg string, start, end int) {
	r.pos, r.n = r.pos[:0], r.n[:0]
	clear(r.byLen)
	clear(r.cursor)
	if r.byLen == nil {
		r.byLen, r.cursor = map[int][]int{}, map[int]int{}
	}
	for i := start; i < end; {
		j := strings.IndexByte(msg[i:end], '`')
		if j < 0 {
			break
		}
		i += j
		k := i
		for k < end && msg[k] == '`' {
			k++
		}
		r.byLen[k-i] = append(r.byLen[k-i], len(r.pos))
		r.pos, r.n = append(r.pos, i), append(r.n, k-i)
		i = k
	}
}

// at returns the run holding byte i; runs are asked about in increasing
// order of i, from the run given as from.
func (r *backtickRuns) at(i, from int) int {
	for r.pos[from]+r.n[from] <= i {
		from++
	}
	return from
}

// nextOfLen returns the first run after run k with exactly n backticks,
// or -1. Calls come in increasing k for each n.
func (r *backtickRuns) nextOfLen(k, n int) int {
	list := r.byLen[n]
	c := r.cursor[n]
	for c < len(list) && list[c] <= k {
		c++
	}
	r.cursor[n] = c
	if c == len(list) {
		return -1
	}
	return list[c]
}

// inlineRegions adds the code spans and double-quoted text of one line.
func (m *textMask) inlineRegions(msg string, start, end int, runs *backtickRuns) {
	indexed := false
	run := 0
	i := start
	quoteOpen, quoteSpans := -1, 0
	var quoteClose string
	for i < end {
		c := msg[i]
		switch {
		case c == '\\' && i+1 < end:
			i += 2
			continue
		case c == '`':
			if !indexed {
				runs.index(msg, start, end)
				indexed = true
			}
			// i may be inside a run whose first backtick was escaped: the
			// span opens with the backticks from i to the run's end, and
			// closes at the next run of exactly that many.
			run = runs.at(i, run)
			runEnd := runs.pos[run] + runs.n[run]
			n := runEnd - i
			if k := runs.nextOfLen(run, n); k >= 0 {
				closed := runs.pos[k] + n
				m.add(i, closed, "inside inline code", inlineRank+m.seq)
				m.seq++
				i = closed
				continue
			}
			i = runEnd // literal backticks
			continue
		case quoteOpen < 0 && (c == '"' || strings.HasPrefix(msg[i:end], "“")):
			quoteOpen, quoteSpans = i, len(m.rs)
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
			m.addQuote(quoteOpen, i, quoteSpans)
			quoteOpen = -1
			continue
		}
		i++
	}
}

// addQuote adds quoted text [start, end) whose code spans are rs[spans:]:
// as the pieces around them, so that regions stay disjoint and in order.
func (m *textMask) addQuote(start, end, spans int) {
	rank := inlineRank + m.seq
	m.seq++
	if spans == len(m.rs) {
		m.add(start, end, "inside quoted text", rank)
		return
	}
	inner := append([]region(nil), m.rs[spans:]...)
	m.rs = m.rs[:spans]
	at := start
	for _, r := range inner {
		if r.start > at {
			m.add(at, r.start, "inside quoted text", rank)
		}
		m.rs = append(m.rs, r)
		at = r.end
	}
	if at < end {
		m.add(at, end, "inside quoted text", rank)
	}
}
