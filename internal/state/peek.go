package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Hooks are one process per event and read tasks.json for a summary line,
// the task list of the status or the task of one agent. PeekTasks serves
// them: one pass that keeps what those need and skips the long texts.

// taskHead is a task without its texts (context, approach, risk) and the
// members no hook shows.
type taskHead struct {
	ID           int64   `json:"id"`
	Title        string  `json:"title"`
	Status       string  `json:"status"`
	Deps         []int64 `json:"deps"`
	Owner        *string `json:"owner"`
	OwnerAgentID *string `json:"owner_agent_id"`
	Acceptance   *string `json:"acceptance"`
}

type tasksHead struct {
	SchemaVersion string     `json:"schema_version"`
	Goal          string     `json:"goal"`
	Decisions     []string   `json:"decisions"`
	Tasks         []taskHead `json:"tasks"`
}

// PeekTasks reads tasks.json for display without a lock or a schema check.
// The tasks carry id, title, status, deps, owner, owner_agent_id and
// acceptance; their context, approach, risk, plan_issue, created_at,
// reuse policy and unknown members are left out (PeekTask reads one task
// whole). A missing file is (nil, false, nil); unparsable JSON is a
// *CorruptError.
func PeekTasks(l Layout) (*Tasks, bool, error) {
	path := l.TasksPath()
	b, ok, err := l.readFile(path)
	if err != nil || !ok {
		return nil, ok, err
	}
	var h tasksHead
	if err := jsonv2.Unmarshal(b, &h, readOpts); err != nil {
		return nil, true, &CorruptError{Path: path, Reason: "not valid JSON: " + err.Error()}
	}
	t := &Tasks{SchemaVersion: h.SchemaVersion, Goal: h.Goal, Decisions: h.Decisions, Tasks: make([]Task, len(h.Tasks))}
	for i, x := range h.Tasks {
		t.Tasks[i] = Task{ID: x.ID, Title: x.Title, Status: x.Status, Deps: x.Deps, Owner: x.Owner, OwnerAgentID: x.OwnerAgentID, Acceptance: x.Acceptance}
	}
	return t, true, nil
}

// PeekTask reads the task at index i of tasks.json whole, skipping the
// others without decoding them.
func PeekTask(l Layout, i int) (*Task, error) {
	path := l.TasksPath()
	b, ok, err := l.readFile(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("read %s: %w", path, os.ErrNotExist)
	}
	dec := jsontext.NewDecoder(bytes.NewBuffer(b), readOpts)
	corrupt := func(err error) error { return &CorruptError{Path: path, Reason: "not valid JSON: " + err.Error()} }
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, corrupt(errors.Join(err, errors.New("not an object")))
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, corrupt(err)
		}
		if name.String() != "tasks" {
			if err := dec.SkipValue(); err != nil {
				return nil, corrupt(err)
			}
			continue
		}
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
			return nil, corrupt(errors.Join(err, errors.New(`"tasks" is not an array`)))
		}
		for k := 0; dec.PeekKind() != ']'; k++ {
			if k < i {
				if err := dec.SkipValue(); err != nil {
					return nil, corrupt(err)
				}
				continue
			}
			var t Task
			if err := jsonv2.UnmarshalDecode(dec, &t); err != nil {
				return nil, corrupt(err)
			}
			return &t, nil
		}
		break
	}
	return nil, fmt.Errorf("%s has no task at index %d", path, i)
}
