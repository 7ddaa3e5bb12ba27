package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/harness/tools"
)

// Tools returns nexus's memory tools (abstract names memory_save and
// memory_gc; the MCP layer adds the configured prefix: nx_memory_save,
// nx_memory_gc). They are nexus's own, not nexus-core's eleven.
func (m *Manager) Tools() []*tools.Tool {
	cats, _ := json.Marshal(m.categoryIDs())
	return []*tools.Tool{
		{
			Name: "memory_save",
			Description: "Store a lesson in .nexus/memory/ (the [m] tag). Only knowledge that cannot be found again in the code or on the web. " +
				"If an existing memory of the same category overlaps the new one, that file is extended with a dated section instead of creating a near-duplicate; the result says which file and why.",
			Params: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["category","topic","content"],"properties":{` +
				`"category":{"type":"string","enum":` + string(cats) + `,"description":"empirical: verified by the project's own experiments; external: upstream constraints and references; pattern: tactical recipes"},` +
				`"topic":{"type":"string","minLength":1,"description":"2-4 descriptive words; becomes the file name (no dates or version numbers)"},` +
				`"content":{"type":"string","minLength":1,"description":"the lesson, in Markdown"}}}`),
			Annotations: tools.Annotations{Title: "Save a memory"},
			Run: func(ctx context.Context, _ *tools.Env, args map[string]any) (map[string]any, error) {
				cat, err := strArg(args, "category")
				if err != nil {
					return nil, err
				}
				topic, err := strArg(args, "topic")
				if err != nil {
					return nil, err
				}
				content, err := strArg(args, "content")
				if err != nil {
					return nil, err
				}
				res, err := m.Save(ctx, cat, topic, content)
				if err != nil {
					return nil, domain(err)
				}
				return toMap(res)
			},
		},
		{
			Name: "memory_gc",
			Description: "Report on .nexus/memory/ for forgetting (the [m:gc] tag): per file its last read, read count, completed cycles and days since the last read, size, and which of the three forgetting signals it meets. " +
				"Nothing is deleted unless delete names files; each deletion run is one git commit whose message tells how to restore every file. Delete only files the user chose.",
			Params: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{` +
				`"delete":{"type":"array","items":{"type":"string","minLength":1},"description":"memory file names to delete (omit for a report)"}}}`),
			Annotations: tools.Annotations{Title: "Memory gc report and deletion", Destructive: true},
			Run: func(ctx context.Context, _ *tools.Env, args map[string]any) (map[string]any, error) {
				names, err := strListArg(args, "delete")
				if err != nil {
					return nil, err
				}
				if len(names) == 0 {
					rep, err := m.Report(ctx)
					if err != nil {
						return nil, err
					}
					return toMap(rep)
				}
				res, err := m.Delete(ctx, names)
				if err != nil {
					return nil, domain(err)
				}
				return toMap(res)
			},
		},
	}
}

// Registry is what Install needs from the engine (harness.Engine has both
// methods).
type Registry interface {
	Register(*tools.Tool)
	Env() *tools.Env
}

// Install registers the memory tools and chains TaskCloseHook onto the
// engine's task_close hook (keeping any hook already installed).
func (m *Manager) Install(r Registry) {
	for _, t := range m.Tools() {
		r.Register(t)
	}
	env := r.Env()
	prev := env.OnTaskClose
	env.OnTaskClose = func(ctx context.Context) {
		if prev != nil {
			prev(ctx)
		}
		m.TaskCloseHook(ctx)
	}
}

// domain turns refusals and bad input into tool errors the caller sees as
// {"error": message}; other failures stay errors.
func domain(err error) error {
	var ie *InputError
	var re *RefusedError
	if errors.As(err, &ie) || errors.As(err, &re) {
		return tools.Errorf(err.Error())
	}
	return err
}

func strArg(args map[string]any, key string) (string, error) {
	v, ok := args[key]
	if !ok {
		return "", tools.Errorf(fmt.Sprintf("missing required parameter %q", key))
	}
	s, ok := v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", tools.Errorf(fmt.Sprintf("parameter %q must be a non-empty string", key))
	}
	return s, nil
}

func strListArg(args map[string]any, key string) ([]string, error) {
	v, ok := args[key]
	if !ok || v == nil {
		return nil, nil
	}
	var list []any
	switch x := v.(type) {
	case []any:
		list = x
	case []string:
		return x, nil
	default:
		return nil, tools.Errorf(fmt.Sprintf("parameter %q must be an array of file names", key))
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok || s == "" {
			return nil, tools.Errorf(fmt.Sprintf("parameter %q must be an array of file names", key))
		}
		out = append(out, s)
	}
	return out, nil
}

func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
