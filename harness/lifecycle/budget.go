package lifecycle

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/nexus-harness/nexus/harness/tags"
)

// Units is how a host measures the text nexus hands it: UTF-16 code units
// (a JavaScript host's string length) or bytes.
type Units int

// Units of a host's text budget.
const (
	UTF16 Units = iota
	Bytes
)

// Len is the length of s in these units.
func (u Units) Len(s string) int {
	if u == Bytes {
		return len(s)
	}
	return TextLen(s)
}

// name is what the units are called in a message.
func (u Units) name() string {
	if u == Bytes {
		return "bytes"
	}
	return "characters"
}

// TextLen is the length of s as a JavaScript host counts it: UTF-16
// code units.
func TextLen(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// part is one piece of a reply's context. A part with more can be clipped
// to its first lines, ending with a line saying what was left out and where
// to get it (a tool); a part with alt is replaced by alt when it cannot fit
// whole (a skill body by "load it with the Skill tool"); other parts stay.
type part struct {
	text string
	more string
	alt  string
}

// fit joins the parts with blank lines within the engine's context budget
// (Options.ContextBudget; 0 = no budget). Whatever it leaves out it says,
// with a pointer to what returns the rest; nothing is cut silently. Text
// still over the budget (fixed parts alone too long) is cut by the host
// adapter, which enforces the hard limit.
func (e *Engine) fit(parts []part) string {
	budget := e.o.Host.ContextBudget
	textLen := e.o.Host.TextUnits.Len
	// The length of the joined text is kept as the parts change (each part's
	// length, plus 2 for each "\n\n" between non-empty parts), so fitting
	// costs a pass over the parts, not one per part.
	lens := make([]int, len(parts))
	total, kept := 0, 0
	for i := range parts {
		parts[i].text = strings.TrimRight(parts[i].text, "\n")
		lens[i] = textLen(parts[i].text)
		if parts[i].text != "" {
			total += lens[i]
			kept++
		}
	}
	joined := func() int { return total + 2*max(kept-1, 0) }
	set := func(i int, text string) {
		if parts[i].text != "" {
			total -= lens[i]
			kept--
		}
		parts[i].text, lens[i] = text, textLen(text)
		if text != "" {
			total += lens[i]
			kept++
		}
	}
	join := func() string {
		var out []string
		for _, p := range parts {
			if p.text != "" {
				out = append(out, p.text)
			}
		}
		return strings.Join(out, "\n\n")
	}
	if budget <= 0 || joined() <= budget {
		return join()
	}
	// A part with an alternative that could not fit even with every
	// clippable part at its minimum is replaced first, so status lists are
	// not clipped for a skill that must go anyway.
	minTotal := 0
	for i, p := range parts {
		switch {
		case p.more != "":
			minTotal += textLen(firstLine(p.text)) + textLen(moreLine(0, p.more)) + 3
		default:
			minTotal += lens[i] + 2
		}
	}
	if minTotal > budget {
		for i := range parts {
			if parts[i].alt != "" {
				alt := parts[i].alt
				parts[i].alt = ""
				set(i, alt)
			}
		}
		if joined() <= budget {
			return join()
		}
	}
	for i := len(parts) - 1; i >= 0 && joined() > budget; i-- {
		if parts[i].more == "" || parts[i].text == "" {
			continue
		}
		over := joined() - budget
		set(i, clipLines(parts[i].text, lens[i]-over, parts[i].more, textLen))
	}
	for i := range parts {
		if joined() <= budget {
			break
		}
		if parts[i].alt != "" {
			alt := parts[i].alt
			parts[i].alt = ""
			set(i, alt)
		}
	}
	return join()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func moreLine(n int, more string) string {
	return fmt.Sprintf("… %d more line(s) not shown here: %s", n, more)
}

// clipLines keeps the first whole lines of text (at least one) so that
// they and the closing "more" line fit in max units (as textLen counts).
func clipLines(text string, max int, more string, textLen func(string) int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	keep := 1
	used := textLen(lines[0])
	for keep < len(lines) {
		tail := textLen(moreLine(len(lines)-keep-1, more)) + 1
		if used+1+textLen(lines[keep])+tail > max {
			break
		}
		used += 1 + textLen(lines[keep])
		keep++
	}
	if keep == len(lines) {
		return text
	}
	return strings.Join(lines[:keep], "\n") + "\n" + moreLine(len(lines)-keep, more)
}

// CutText cuts s to at most max units (UTF-16, as TextLen), at a line
// boundary where one is near, and says so at the end. Host codecs call it
// as the last guard of a host's hard limit.
func CutText(s string, max int) string { return UTF16.Cut(s, max) }

// Cut is CutText in these units.
func (unit Units) Cut(s string, max int) string {
	total := unit.Len(s)
	if total <= max {
		return s
	}
	note := fmt.Sprintf("\n[nexus cut this message to %d of %d %s: the host shows at most %d. Ask for the rest with the nexus tools (nx_context, nx_plan_status, nx_task_list).]", max, total, unit.name(), max)
	keep := max - unit.Len(note)
	if keep < 0 {
		keep = 0
	}
	// Walk to the byte offset of keep units, whole runes only.
	off, units := 0, 0
	for off < len(s) {
		r, size := utf8.DecodeRuneInString(s[off:])
		u := 1
		switch {
		case unit == Bytes:
			u = size
		case r >= 0x10000:
			u = 2
		}
		if units+u > keep {
			break
		}
		units += u
		off += size
	}
	cut := s[:off]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 && off-i < 400 {
		cut = cut[:i]
	}
	return cut + note
}

// skillPart is an activated skill as a reply part: injected whole when it
// fits the budget, else named for the model to load itself
// (Options.SkillLoader), else clipped with a pointer to its source.
func (e *Engine) skillPart(st tags.SkillText, tag string) part {
	p := part{text: st.Text}
	textLen := e.o.Host.TextUnits.Len
	if e.o.Host.ContextBudget <= 0 || textLen(st.Text) <= e.o.Host.ContextBudget {
		return p
	}
	mode := ""
	if st.Mode != "" {
		mode = " in " + st.Mode + " mode"
	}
	if e.o.Host.SkillLoader != nil {
		if how, ok := e.o.Host.SkillLoader(st.Skill); ok {
			p.alt = fmt.Sprintf("nexus activated the %s skill%s (by %s). Its instructions (%d %s) are longer than a hook message may carry, so they are not repeated here: load them now with %s, and follow them as your instructions for this request.",
				st.Skill, mode, tag, textLen(st.Text), e.o.Host.TextUnits.name(), how)
			return p
		}
	}
	install := e.o.Host.InstallHint
	if install == "" {
		install = "install nexus for the host (`nexus install`)"
	}
	p.more = fmt.Sprintf("the %s skill is longer than a hook message may carry, and it is not installed where the host can load it; %s so the whole skill is available (source: skills/%s/body.md of nexus-core %s)", st.Skill, install, st.Skill, e.o.Core.Version())
	return p
}
