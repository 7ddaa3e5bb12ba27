package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/nexus-harness/nexus/internal/safefile"
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
	// A repeated search of an unchanged history.json is answered from
	// the results kept for that version of the file.
	key := historyKey{query, lastN}
	version, stable := state.StableVersion(env.Store.L.HistoryPath())
	if stable {
		if r, ok := env.results.historyGet(key, version); ok {
			return r, nil
		}
	}
	res, err := SearchHistory(env.Store, query, lastN)
	if err != nil {
		return nil, err
	}
	if stable {
		env.results.historyPut(key, version, res)
	}
	return res, nil
}

// SearchHistory is history_search's answer for query and lastN, read from
// st's history.json in one streaming pass (nexus view searches with it).
func SearchHistory(st *state.Store, query string, lastN int64) (map[string]any, error) {
	f, err := st.OpenHistory()
	if err != nil {
		return nil, err
	}
	var matches []jsontext.Value
	total := 0
	if f != nil {
		matches, total, err = searchCycles(f, strings.ToLower(query), lastN)
		f.Close()
		var tl *safefile.TooLargeError
		if errors.As(err, &tl) {
			return nil, tl
		}
		if err != nil {
			return nil, &state.CorruptError{Path: st.L.HistoryPath(), Reason: "not valid JSON: " + err.Error()}
		}
	}
	cycles := make([]cycleSummary, len(matches))
	for i, raw := range matches {
		cycles[i] = summarizeCycle(raw)
	}
	return map[string]any{"total": total, "showing": len(cycles), "cycles": cycles}, nil
}

// searchCycles walks history.json once, streaming (memory holds one cycle
// and the matches kept, not the file): each cycle is read as a raw value
// and, when there is a query, its search text (see appendSearchText) is
// matched against the lower-cased query. It returns the last lastN
// matching cycles (copied out of the decoder's buffer) and the number of
// matches.
func searchCycles(r io.Reader, query string, lastN int64) ([]jsontext.Value, int, error) {
	dec := jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil {
		return nil, 0, err
	} else if tok.Kind() != '{' {
		return nil, 0, errors.New("history.json is not a JSON object")
	}
	var (
		ring  []jsontext.Value // the last lastN matches, oldest at next
		next  int
		total int
		text  []byte
		q     = []byte(query)
	)
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, 0, err
		}
		if name.String() != "cycles" {
			if err := dec.SkipValue(); err != nil {
				return nil, 0, err
			}
			continue
		}
		if tok, err := dec.ReadToken(); err != nil {
			return nil, 0, err
		} else if tok.Kind() != '[' {
			return nil, 0, errors.New(`history.json's "cycles" is not an array`)
		}
		for dec.PeekKind() != ']' {
			raw, err := dec.ReadValue()
			if err != nil {
				return nil, 0, err
			}
			if len(q) > 0 {
				text = appendSearchText(text[:0], raw)
				if !bytes.Contains(text, q) {
					continue
				}
			}
			total++
			if lastN <= 0 {
				continue
			}
			if int64(len(ring)) < lastN {
				ring = append(ring, bytes.Clone(raw))
			} else {
				ring[next] = append(ring[next][:0], raw...)
				next = (next + 1) % len(ring)
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, 0, err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, 0, err
	}
	return append(ring[next:], ring[:next]...), total, nil
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
