package kernel

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyjson"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
)

// NoContextYet is get_context's text for a store without content.
const NoContextYet = "This project has no context data yet.\n\nTo populate your project context:\n- Use propose_decision to record architectural decisions\n- Use update_state to track current progress"

// ListDecisions is list_decisions: rows sorted by number, newest first.
func ListDecisions(c *Corpus, limit int, includeSuperseded bool) []*pyjson.Object {
	var entries []Entry
	for _, e := range c.Entries {
		if includeSuperseded || e.D.Status == decision.StatusActive {
			entries = append(entries, e)
		}
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].D.Num > entries[j].D.Num })
	if limit >= 0 && len(entries) > limit {
		entries = entries[:limit]
	}
	rows := make([]*pyjson.Object, len(entries))
	for i, e := range entries {
		o := pyjson.NewObject().Set("number", e.D.Num).Set("title", e.D.Title).Set("date", e.D.Date.String()).Set("status", e.D.Status)
		if e.D.DecisionType != "" {
			o.Set("type", e.D.DecisionType)
		}
		o.Set("confidence", e.D.Confidence)
		rows[i] = o
	}
	return rows
}

// RenderList is list_decisions' text.
func RenderList(rows []*pyjson.Object) string {
	if len(rows) == 0 {
		return "No decisions recorded yet."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Decisions (%d total):\n\n", len(rows))
	for _, r := range rows {
		num, _ := r.Get("number")
		status, _ := r.Get("status")
		title, _ := r.Get("title")
		fmt.Fprintf(&b, "  - D%03d  [%-10s]  %s\n", num, status, pytext.Truncate(title.(string), 70))
	}
	return pytext.RStrip(b.String())
}

// GetDecision is get_decision: the first decision file (in list order)
// whose number is num. mode is "full" or "header".
func GetDecision(s Store, num int, mode string) (string, error) {
	stems, err := s.ListDecisions()
	if err != nil {
		return "", err
	}
	for _, stem := range stems {
		n, ok := decision.NumberOf(stem)
		if !ok || n != num {
			continue
		}
		text, ok, err := s.ReadFile(DecisionsDir + "/" + stem + ".md")
		var pe *ProblemError
		if errors.As(err, &pe) {
			return fmt.Sprintf("Error: Decision %d cannot be read: %s", num, pe.Error()), nil
		}
		if err != nil {
			return "", err
		}
		if !ok {
			break
		}
		if mode != "header" {
			return pytext.RStrip(text), nil
		}
		d, err := decision.Parse(text, stem+".md")
		if err != nil {
			return fmt.Sprintf("Error: Decision %d could not be parsed", num), nil
		}
		return renderHeader(d), nil
	}
	return fmt.Sprintf("Error: Decision %d not found", num), nil
}

func renderHeader(d *decision.Decision) string {
	var lines []string
	for _, kv := range [][2]string{{"status", d.Status}, {"supersedes", d.Supersedes}, {"superseded_by", d.SupersededBy},
		{"date", d.Date.String()}, {"decision_type", d.DecisionType}, {"confidence", d.Confidence}} {
		if kv[1] != "" {
			lines = append(lines, kv[0]+": "+kv[1])
		}
	}
	out := strings.Join(lines, "\n") + "\n\n" + fmt.Sprintf("# %03d \u2014 %s", d.Num, d.Title)
	if r := pytext.Strip(d.Rationale); r != "" {
		lede := r
		if i := strings.Index(r, "\n\n"); i >= 0 {
			lede = r[:i]
		}
		if pytext.Len(lede) > 300 {
			lede = pytext.RStrip(pytext.Head(lede, 299)) + "…"
		}
		out += "\n\n" + lede
	}
	return out
}

// SearchHit is one search_decisions row.
type SearchHit struct {
	Num     int
	Title   string
	Date    string
	Status  string
	Snippet string
	Score   float64
}

// JSON renders the hit (an empty snippet is left out).
func (h SearchHit) JSON() *pyjson.Object {
	o := pyjson.NewObject().Set("number", h.Num).Set("title", h.Title).Set("date", h.Date).Set("status", h.Status)
	if h.Snippet != "" {
		o.Set("relevance_snippet", h.Snippet)
	}
	return o.Set("score", h.Score)
}

// SearchEmptyQuery is search_decisions' rejection of a blank query.
const SearchEmptyQuery = "search_decisions requires a non-empty query. Use list_decisions to browse all decisions."

// Search is search_decisions (bm25_search): BM25 over active (or all)
// decisions, scaffold seed included, bm25s stopwords only.
func Search(c *Corpus, query string, limit int, includeSuperseded bool) ([]SearchHit, *ErrorPayload, error) {
	if pytext.Strip(query) == "" {
		return nil, &ErrorPayload{Kind: "rejected", Reason: SearchEmptyQuery}, nil
	}
	si, err := c.searchIndex(includeSuperseded)
	if err != nil {
		return nil, nil, err
	}
	var out []SearchHit
	for _, h := range si.ix.Top(si.tok.Tokens(query), limit) {
		d, err := c.Full(si.entries[h.Doc])
		if err != nil {
			return nil, nil, err
		}
		out = append(out, SearchHit{Num: d.Num, Title: d.Title, Date: d.Date.String(), Status: d.Status,
			Snippet: snippet(d.Rationale, query), Score: Round3(float64(h.Score))})
	}
	return out, nil, nil
}

var reSentence = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[.!?]\s`) })

// snippet shows the rationale around the first query word found in it,
// else its first sentence.
func snippet(rationale, query string) string {
	rs := []rune(rationale)
	lower := []rune(pytext.Lower(rationale))
	for _, word := range pytext.Fields(query) {
		w := []rune(pytext.Lower(word))
		pos := runeIndex(lower, w)
		if pos < 0 {
			continue
		}
		start := max(0, pos-50)
		end := min(len(rs), pos+len([]rune(word))+50)
		if end < start {
			end = start
		}
		s := pytext.Strip(string(rs[min(start, len(rs)):end]))
		if start > 0 {
			s = "..." + s
		}
		if end < len(rs) {
			s += "..."
		}
		return s
	}
	first := rationale
	if loc := reSentence().FindStringIndex(rationale); loc != nil {
		first = rationale[:loc[0]]
	}
	s := pytext.Strip(pytext.Head(first, 100))
	if pytext.Len(first) > 100 {
		s += "..."
	}
	return s
}

func runeIndex(hay, needle []rune) int {
	if len(needle) == 0 {
		return 0
	}
	for i := 0; i+len(needle) <= len(hay); i++ {
		match := true
		for j, r := range needle {
			if hay[i+j] != r {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

// RenderSearch is search_decisions' text. The reference's renderer reads a
// "query" key the local envelope does not carry, hence the empty quotes.
func RenderSearch(hits []SearchHit, errp *ErrorPayload) string {
	if errp != nil {
		return "Error: " + errp.Reason
	}
	return renderSearch(`""`, hits)
}

// RenderSearchFor is the command line's search text: RenderSearch's rows
// under the query searched for (the MCP answer keeps the reference's
// empty quotes).
func RenderSearchFor(query string, hits []SearchHit) string {
	return renderSearch(strconv.Quote(query), hits)
}

func renderSearch(quoted string, hits []SearchHit) string {
	if len(hits) == 0 {
		return "No matches for " + quoted + "."
	}
	var b strings.Builder
	if len(hits) == 1 {
		fmt.Fprintf(&b, "Found 1 match for %s:\n\n", quoted)
	} else {
		fmt.Fprintf(&b, "Found %d matches for %s:\n\n", len(hits), quoted)
	}
	for _, h := range hits {
		fmt.Fprintf(&b, "  - D%03d  [%s]  BM25 %5.2f\n    %s\n", h.Num, h.Status, h.Score, pytext.Truncate(h.Title, 70))
		if h.Snippet != "" {
			b.WriteString("    \"" + pytext.Truncate(strings.ReplaceAll(h.Snippet, "\n", " "), 74) + "\"\n")
		}
		b.WriteString("\n")
	}
	return pytext.RStrip(b.String())
}

// RawFile is get_raw_file: a store file's text, or an error payload.
// available lists the store's markdown files when the path is missing.
func RawFile(s Store, p string, listMarkdown func() ([]string, error)) (content string, errp *ErrorPayload, available []string, err error) {
	clean := path.Clean("/" + strings.ReplaceAll(p, "\\", "/"))
	if p == "" || strings.Contains(p, "\x00") || strings.HasPrefix(p, "/") || clean == "/" || strings.Contains(p, "..") {
		return "", &ErrorPayload{Kind: "error", Reason: "Invalid path: " + p}, nil, nil
	}
	text, ok, err := s.ReadFile(strings.TrimPrefix(clean, "/"))
	if err != nil {
		return "", nil, nil, err
	}
	if ok {
		return text, nil, nil, nil
	}
	if listMarkdown != nil {
		all, err := listMarkdown()
		if err != nil {
			return "", nil, nil, err
		}
		sort.Strings(all)
		for _, f := range all {
			if strings.HasPrefix(f, SnapshotsDir+"/") {
				continue
			}
			available = append(available, f)
			if len(available) == 20 {
				break
			}
		}
	}
	return "", &ErrorPayload{Kind: "error", Reason: "File not found: " + p}, available, nil
}
