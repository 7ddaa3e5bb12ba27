package harness

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/memory"
)

// memoryTools are nexus's memory tools over a project's memory.Manager
// (abstract names memory_save and memory_gc; the MCP layer adds the
// configured prefix: nx_memory_save, nx_memory_gc). They are nexus's own,
// not nexus-core's eleven. The engine validates every call against Params
// before Handle, so Handle reads its arguments without checking them again.
func memoryTools(m *memory.Manager) []*tools.Tool {
	cats, _ := json.Marshal(m.CategoryIDs())
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
			Handle: tools.Object(func(ctx context.Context, _ *tools.Env, args map[string]any) (map[string]any, error) {
				cat, _ := args["category"].(string)
				topic, _ := args["topic"].(string)
				content, _ := args["content"].(string)
				res, err := m.Save(ctx, cat, topic, content)
				if err != nil {
					return nil, memoryError(err)
				}
				return toMap(res)
			}),
		},
		{
			Name: "memory_gc",
			Description: "Report on .nexus/memory/ for forgetting (the [m:gc] tag): per file its last read, read count, completed cycles and days since the last read, size, and which of the three forgetting signals it meets. " +
				"Nothing is deleted unless delete names files; each deletion run is one git commit whose message tells how to restore every file. Delete only files the user chose.",
			Params: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{` +
				`"delete":{"type":"array","items":{"type":"string","minLength":1},"description":"memory file names to delete (omit for a report)"}}}`),
			Annotations: tools.Annotations{Title: "Memory gc report and deletion", Destructive: true},
			Handle: tools.Object(func(ctx context.Context, _ *tools.Env, args map[string]any) (map[string]any, error) {
				var names []string
				list, _ := args["delete"].([]any)
				for _, n := range list {
					s, _ := n.(string)
					names = append(names, s)
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
					return nil, memoryError(err)
				}
				return toMap(res)
			}),
		},
	}
}

// AttachMemory puts a project's memory tools into the engine's tool
// registry and chains the memory's task_close hook (automatic gc) after
// any hook already installed.
func (e *Engine) AttachMemory(m *memory.Manager) {
	for _, t := range memoryTools(m) {
		e.Register(t)
	}
	prev := e.env.OnTaskClose
	e.env.OnTaskClose = func(ctx context.Context) {
		if prev != nil {
			prev(ctx)
		}
		m.TaskCloseHook(ctx)
	}
}

// memoryError turns refusals and bad input into tool errors the caller
// sees as {"error": message}; other failures stay errors.
func memoryError(err error) error {
	var ie *memory.InputError
	var re *memory.RefusedError
	if errors.As(err, &ie) || errors.As(err, &re) {
		return tools.Errorf(err.Error())
	}
	return err
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
