package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

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
		Run:         runHistorySearch,
	}
}

func runHistorySearch(_ context.Context, env *Env, args map[string]any) (map[string]any, error) {
	query, _ := str(args, "query")
	query = strings.ToLower(query)
	lastN := int64(defaultLastN)
	if n, ok := integer(args, "last_n"); ok {
		lastN = n
	}
	h, ok, err := env.Store.ReadHistory()
	if err != nil {
		return nil, err
	}
	matches := []json.RawMessage{}
	if ok {
		for _, raw := range h.Cycles {
			if query == "" || strings.Contains(strings.ToLower(searchText(raw)), query) {
				matches = append(matches, raw)
			}
		}
	}
	total := len(matches)
	if int64(len(matches)) > lastN {
		matches = matches[len(matches)-int(lastN):]
	}
	cycles := make([]any, 0, len(matches))
	for _, raw := range matches {
		cycles = append(cycles, summarizeCycle(raw))
	}
	return map[string]any{"total": total, "showing": len(cycles), "cycles": cycles}, nil
}

// searchText renders a cycle the way the contract matches it: its compact
// JSON serialisation, with <, > and & left alone as JavaScript's
// JSON.stringify leaves them (the file on disk is indented).
func searchText(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// summarizeCycle reads any history record leniently (legacy records lack
// schema_version; other harnesses may omit plan) and returns its summary.
func summarizeCycle(raw json.RawMessage) map[string]any {
	var c state.CycleView
	_ = json.Unmarshal(raw, &c) // a record that is not an object summarises as empty
	out := map[string]any{"completed_at": c.CompletedAt, "branch": c.Branch}
	var plan *struct {
		Topic  string `json:"topic"`
		Issues []struct {
			Title    string  `json:"title"`
			Status   string  `json:"status"`
			Decision *string `json:"decision"`
		} `json:"issues"`
	}
	if len(c.Plan) > 0 && json.Unmarshal(c.Plan, &plan) == nil && plan != nil {
		out["topic"] = plan.Topic
		decisions := []any{}
		for _, is := range plan.Issues {
			if is.Status != state.IssueDecided {
				continue
			}
			d := map[string]any{"title": is.Title}
			if is.Decision != nil {
				d["decision"] = *is.Decision
			}
			decisions = append(decisions, d)
		}
		out["decisions"] = decisions
	}
	if c.Tasks != nil {
		out["task_count"] = len(c.Tasks)
	}
	return out
}
