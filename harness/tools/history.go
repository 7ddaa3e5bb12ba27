package tools

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/nexus-harness/nexus/internal/state"
)

// defaultLastN is history_search's default limit.
const defaultLastN = 10

func historySearch() *Tool {
	return &Tool{
		Name: "history_search",
		Description: "Search the archived plan/task cycles in .nexus/history.json: a case-insensitive text match over each whole cycle. " +
			"Returns the last last_n matches (default 10) in chronological order, with topic, decisions and task count.",
		Params:      params("history_search"),
		Annotations: withTitle(readOnly, "Search history"),
		Handle:      Object(runHistorySearch),
	}
}

func runHistorySearch(_ context.Context, env *Env, args map[string]any) (map[string]any, error) {
	query, _ := str(args, "query")
	lastN := int64(defaultLastN)
	if n, ok := integer(args, "last_n"); ok {
		lastN = n
	}
	return env.results.searchHistory(env.Store, historyKey{query, lastN})
}

// SearchHistory is history_search's answer for query and lastN, read from
// st's history.json in one streaming pass, nothing kept (nexus view
// searches with it).
func SearchHistory(st *state.Store, query string, lastN int64) (map[string]any, error) {
	var c resultCache
	return c.searchHistory(st, historyKey{query, lastN})
}

type historyKey struct {
	query string
	lastN int64
}

// historyMatches is what one history_search (query and last_n) has found
// in the bytes of history.json its mark covers: the number of matching
// cycles and the last last_n of them (a ring, oldest at next), each
// matched on its search text (appendSearchText). A search reads only what
// was appended since its mark; a file changed otherwise is read from its
// start (state.ReadHistorySince), streaming: memory holds one cycle and
// the matches kept, not the file.
type historyMatches struct {
	mark   state.HistoryMark
	total  int
	ring   []jsontext.Value
	next   int
	kept   int            // bytes in ring
	result map[string]any // the answer for mark (nil: to be built)
}

const (
	// maxHistorySearches bounds the searches kept.
	maxHistorySearches = 16
	// maxHistoryKept bounds the bytes of cycles one kept search holds (so
	// the searches kept hold at most 4 MiB); a search whose last_n
	// matches are larger is not kept and reads the file whole next time.
	maxHistoryKept = 256 << 10
)

func (c *resultCache) searchHistory(s *state.Store, k historyKey) (map[string]any, error) {
	c.historyMu.Lock()
	defer c.historyMu.Unlock()
	hm := c.history[k]
	if hm == nil {
		hm = &historyMatches{}
	}
	q := []byte(strings.ToLower(k.query))
	var text []byte
	mark, err := s.ReadHistorySince(hm.mark, func() {
		*hm = historyMatches{}
	}, func(raw []byte) error {
		if len(q) > 0 {
			text = appendSearchText(text[:0], raw)
			if !bytes.Contains(text, q) {
				return nil
			}
		}
		hm.total++
		hm.result = nil
		if k.lastN <= 0 {
			return nil
		}
		if int64(len(hm.ring)) < k.lastN {
			hm.ring = append(hm.ring, bytes.Clone(raw))
			hm.kept += len(raw)
		} else {
			hm.kept += len(raw) - len(hm.ring[hm.next])
			hm.ring[hm.next] = append(hm.ring[hm.next][:0], raw...)
			hm.next = (hm.next + 1) % len(hm.ring)
		}
		return nil
	})
	if err != nil {
		delete(c.history, k)
		return nil, err
	}
	hm.mark = mark
	if hm.result == nil {
		matches := append(hm.ring[hm.next:len(hm.ring):len(hm.ring)], hm.ring[:hm.next]...)
		cycles := make([]cycleSummary, len(matches))
		for i, raw := range matches {
			cycles[i] = summarizeCycle(raw)
		}
		hm.result = map[string]any{"total": hm.total, "showing": len(cycles), "cycles": cycles}
	}
	switch {
	case hm.kept > maxHistoryKept:
		delete(c.history, k)
	case c.history[k] == nil:
		if c.history == nil {
			c.history = map[historyKey]*historyMatches{}
		}
		if len(c.history) >= maxHistorySearches {
			for old := range c.history {
				delete(c.history, old)
				break
			}
		}
		c.history[k] = hm
	}
	return hm.result, nil
}

// appendSearchText appends the text history_search matches for one cycle:
// its JSON.stringify serialisation, lower-cased. The file on disk is
// indented and may spell strings with other escapes, so whitespace between
// tokens is dropped and string escapes are re-spelled as JSON.stringify
// writes them (only ", \, and control characters escaped; everything else
// literal). Members keep their order in the file, as in JavaScript.
func appendSearchText(dst []byte, raw []byte) []byte {
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case !inString:
			switch c {
			case ' ', '\t', '\n', '\r':
				continue
			case '"':
				inString = true
			}
			dst = append(dst, lowerASCII[c])
		case c == '"':
			inString = false
			dst = append(dst, c)
		case c == '\\' && i+1 < len(raw):
			n, r := unescape(raw[i:])
			i += n - 1
			dst = appendJSChar(dst, r)
		case c < utf8.RuneSelf:
			dst = append(dst, lowerASCII[c])
		default:
			r, n := utf8.DecodeRune(raw[i:])
			i += n - 1
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
		}
	}
	return dst
}

var lowerASCII = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return t
}()

// unescape decodes the escape sequence at the start of s (s[0] is '\')
// and returns its length and the character (a lone surrogate stays one).
func unescape(s []byte) (int, rune) {
	switch s[1] {
	case 'b':
		return 2, '\b'
	case 'f':
		return 2, '\f'
	case 'n':
		return 2, '\n'
	case 'r':
		return 2, '\r'
	case 't':
		return 2, '\t'
	case 'u':
		r1, ok := hex4(s[2:])
		if !ok {
			return 2, rune(s[1])
		}
		if utf16.IsSurrogate(r1) && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if r2, ok := hex4(s[8:]); ok {
				if r := utf16.DecodeRune(r1, r2); r != unicode.ReplacementChar {
					return 12, r
				}
			}
		}
		return 6, r1
	}
	return 2, rune(s[1]) // \" \\ \/
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// appendJSChar appends one string character as JSON.stringify spells it,
// lower-cased.
func appendJSChar(dst []byte, r rune) []byte {
	switch r {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	if r < 0x20 || utf16.IsSurrogate(r) {
		return fmt.Appendf(dst, `\u%04x`, r)
	}
	return utf8.AppendRune(dst, unicode.ToLower(r))
}

// cycleSummary is one cycle of history_search's answer.
type cycleSummary struct {
	CompletedAt string `json:"completed_at"`
	Branch      string `json:"branch"`
	// Topic and Decisions are present when the cycle has a plan;
	// TaskCount when it has a task list.
	Topic     *string            `json:"topic,omitzero"`
	Decisions *[]decisionSummary `json:"decisions,omitzero"`
	TaskCount *int               `json:"task_count,omitzero"`
}

type decisionSummary struct {
	Title    string  `json:"title"`
	Decision *string `json:"decision,omitzero"`
}

// summarizeCycle reads any history record leniently (legacy records lack
// schema_version; other harnesses may omit plan; a member of an unexpected
// type reads as absent) and returns its summary.
func summarizeCycle(raw []byte) cycleSummary {
	var c struct {
		CompletedAt jsontext.Value `json:"completed_at"`
		Branch      jsontext.Value `json:"branch"`
		Plan        jsontext.Value `json:"plan"`
		Tasks       jsontext.Value `json:"tasks"`
	}
	var out cycleSummary
	if state.Decode(raw, &c) != nil {
		return out
	}
	_ = state.Decode(c.CompletedAt, &out.CompletedAt)
	_ = state.Decode(c.Branch, &out.Branch)
	var plan *struct {
		Topic  string `json:"topic"`
		Issues []struct {
			Title    string  `json:"title"`
			Status   string  `json:"status"`
			Decision *string `json:"decision"`
		} `json:"issues"`
	}
	if len(c.Plan) > 0 && state.Decode(c.Plan, &plan) == nil && plan != nil {
		out.Topic = &plan.Topic
		decisions := []decisionSummary{}
		for _, is := range plan.Issues {
			if is.Status == state.IssueDecided {
				decisions = append(decisions, decisionSummary{Title: is.Title, Decision: is.Decision})
			}
		}
		out.Decisions = &decisions
	}
	var tasks []jsontext.Value
	if len(c.Tasks) > 0 && state.Decode(c.Tasks, &tasks) == nil && tasks != nil {
		n := len(tasks)
		out.TaskCount = &n
	}
	return out
}
