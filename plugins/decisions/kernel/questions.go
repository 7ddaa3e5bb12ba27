package kernel

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
)

// Questions is open-questions.md as the reference models it: a header line
// and a list of blocks (prose, ## headers, ### topics, entries), each
// keeping its lines verbatim so an edit touches only what it changes.
type Questions struct {
	Header string
	Blocks []*QBlock
}

// Block kinds.
const (
	BlockProse = iota
	BlockHeader
	BlockTopic
	BlockEntry
)

// QBlock is one block of open-questions.md.
type QBlock struct {
	Kind     int
	Lines    []string
	ID       string // entry id ("Q12" or a legacy timestamp); for topics the embedded id
	Resolved bool   // entry carries a "[Resolved by D.. on ..]" prefix
	Divider  bool   // header whose text contains "resolved"
}

var (
	reResolvedEntry = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^- \[Resolved by D(\d+) on (\d{4}-\d{2}-\d{2})\] \[([^\]]*)\](?: (.*))?$`)
	})
	reOpenEntry = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^- \[([^\]]*)\](?: (.*))?$`) })
	reLegacyID  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$`) })
	reBracket   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[([^\]]*)\]`) })
)

// qNumber returns n for an id "Q<n>" with n >= 1.
func qNumber(id string) (int, bool) {
	rest, ok := strings.CutPrefix(id, "Q")
	if !ok || rest == "" {
		return 0, false
	}
	n := 0
	for _, r := range rest {
		d := pytext.DecimalValue(r)
		if d < 0 {
			return 0, false
		}
		n = n*10 + d
		if n > 1<<30 {
			return 0, false
		}
	}
	return n, n >= 1
}

func validQuestionID(id string) bool {
	if _, ok := qNumber(id); ok {
		return true
	}
	return reLegacyID().MatchString(id)
}

// ParseQuestions reads open-questions.md.
func ParseQuestions(text string) *Questions {
	lines := strings.Split(text, "\n")
	i := 0
	for i < len(lines) && pytext.Strip(lines[i]) == "" {
		i++
	}
	q := &Questions{Header: "# Open Questions"}
	if i < len(lines) && strings.HasPrefix(lines[i], "# ") {
		q.Header = pytext.RStrip(lines[i])
		i++
	}
	for i < len(lines) {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "## "):
			q.Blocks = append(q.Blocks, &QBlock{Kind: BlockHeader, Lines: []string{line},
				Divider: strings.Contains(strings.ToLower(pytext.Strip(line)), "resolved")})
			i++
		case strings.HasPrefix(line, "### "):
			b := &QBlock{Kind: BlockTopic, Lines: []string{line}}
			for _, m := range reBracket().FindAllStringSubmatch(line, -1) {
				if validQuestionID(m[1]) {
					b.ID = m[1]
					break
				}
			}
			i++
			for i < len(lines) {
				l := lines[i]
				if pytext.Strip(l) == "" || strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "### ") || strings.HasPrefix(l, "- [") {
					break
				}
				b.Lines = append(b.Lines, l)
				i++
			}
			q.Blocks = append(q.Blocks, b)
		case strings.HasPrefix(line, "- ["):
			b := parseEntry(line)
			i++
			if b.Kind == BlockEntry {
				for i < len(lines) && strings.HasPrefix(lines[i], "  ") {
					b.Lines = append(b.Lines, lines[i])
					i++
				}
			}
			q.Blocks = append(q.Blocks, b)
		default:
			q.Blocks = append(q.Blocks, &QBlock{Kind: BlockProse, Lines: []string{line}})
			i++
		}
	}
	return q
}

func parseEntry(line string) *QBlock {
	if m := reResolvedEntry().FindStringSubmatch(line); m != nil && validQuestionID(m[3]) {
		return &QBlock{Kind: BlockEntry, Lines: []string{line}, ID: m[3], Resolved: true}
	}
	if m := reOpenEntry().FindStringSubmatch(line); m != nil && validQuestionID(m[1]) {
		return &QBlock{Kind: BlockEntry, Lines: []string{line}, ID: m[1]}
	}
	return &QBlock{Kind: BlockProse, Lines: []string{line}}
}

// Format renders the file: the header and every block's lines joined by
// newlines (no newline is added at the end).
func (q *Questions) Format() string {
	all := []string{q.Header}
	for _, b := range q.Blocks {
		all = append(all, b.Lines...)
	}
	return strings.Join(all, "\n")
}

func (q *Questions) dividerIndex() int {
	for i, b := range q.Blocks {
		if b.Kind == BlockHeader && b.Divider {
			return i
		}
	}
	return -1
}

func dedupe(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// CheckResolvable returns the reference's Tier 0 message when ids name
// unknown or ambiguous entries, or "" when they can all be resolved.
func (q *Questions) CheckResolvable(ids []string) string {
	known := map[string]bool{}
	count := map[string][]*QBlock{}
	for _, b := range q.Blocks {
		if b.ID == "" {
			continue
		}
		known[b.ID] = true
		if b.Kind == BlockEntry {
			count[b.ID] = append(count[b.ID], b)
		}
	}
	ids = dedupe(ids)
	var unknown []string
	for _, id := range ids {
		if !known[id] {
			unknown = append(unknown, pytext.Repr(id))
		}
	}
	if len(unknown) > 0 {
		return "resolves_questions contains unknown id(s): " + strings.Join(unknown, ", ") +
			". Call get_context (L0 lists every open question) to see the canonical ids in open-questions.md."
	}
	var amb []string
	for _, id := range ids {
		entries := count[id]
		if len(entries) < 2 {
			continue
		}
		slots := make([]string, len(entries))
		for i, e := range entries {
			if n, ok := qNumber(e.ID); ok {
				slots[i] = fmt.Sprintf("Q%d", n)
			} else {
				slots[i] = "<no-Q-id>"
			}
		}
		amb = append(amb, fmt.Sprintf("%s matches %d entries \u2014 disambiguate to one of: %s", pytext.Repr(id), len(entries), strings.Join(slots, ", ")))
	}
	if len(amb) > 0 {
		return "resolves_questions contains ambiguous id(s): " + strings.Join(amb, "; ") + "."
	}
	return ""
}

// Resolve stamps every open entry named by ids as resolved by decision num
// on date (in place), appends a "## Resolved" divider when the file had
// none, and returns the requested ids that name entries.
func (q *Questions) Resolve(ids []string, num int, date string) (resolved []string, changed bool) {
	ids = dedupe(ids)
	if q.CheckResolvable(ids) != "" {
		return nil, false
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	div := q.dividerIndex()
	moved := 0
	present := map[string]bool{}
	for i, b := range q.Blocks {
		if b.Kind != BlockEntry {
			continue
		}
		if want[b.ID] {
			present[b.ID] = true
		}
		if (div >= 0 && i > div) || !want[b.ID] {
			continue
		}
		moved++
		if !b.Resolved {
			b.Lines[0] = fmt.Sprintf("- [Resolved by D%d on %s] ", num, date) + strings.TrimPrefix(b.Lines[0], "- ")
			b.Resolved = true
			changed = true
		}
	}
	if div < 0 && moved > 0 {
		q.Blocks = append(q.Blocks, &QBlock{Kind: BlockProse, Lines: []string{""}},
			&QBlock{Kind: BlockHeader, Lines: []string{"## Resolved"}, Divider: true})
		changed = true
	}
	for _, id := range ids {
		if present[id] {
			resolved = append(resolved, id)
		}
	}
	return resolved, changed
}

// NextQNumber is one more than the highest Q number in the file.
func (q *Questions) NextQNumber() int {
	max := 0
	for _, b := range q.Blocks {
		if n, ok := qNumber(b.ID); ok && n > max {
			max = n
		}
	}
	return max + 1
}

// Add inserts a new entry after the header's leading blank and comment
// lines.
func (q *Questions) Add(line string) {
	at := 0
	for at < len(q.Blocks) {
		b := q.Blocks[at]
		if b.Kind != BlockProse || !(pytext.Strip(b.Lines[0]) == "" || strings.HasPrefix(pytext.Strip(b.Lines[0]), "<!--")) {
			break
		}
		at++
	}
	blk := parseEntry(line)
	q.Blocks = append(q.Blocks[:at], append([]*QBlock{blk}, q.Blocks[at:]...)...)
}

// OpenEntries returns the unresolved entries before the resolved divider.
func (q *Questions) OpenEntries() []*QBlock {
	div := q.dividerIndex()
	var out []*QBlock
	for i, b := range q.Blocks {
		if div >= 0 && i >= div {
			break
		}
		if b.Kind == BlockEntry && !b.Resolved {
			out = append(out, b)
		}
	}
	return out
}
