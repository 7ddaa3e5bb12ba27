package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/schema"
)

// StateFiles checks every state file nexus reads against its nexus-core
// schema, through the store's own reads: plan.json, tasks.json,
// history.json (cycles in the shape nexus writes are checked against the
// cycle schema; legacy and foreign cycles only need to be objects),
// agent-tracker.json and each line of memory-access.jsonl.
type StateFiles struct {
	// Store reads the files; its validator (nil: JSON syntax only, when
	// there is no distribution) supplies the schemas.
	Store *state.Store
}

func (StateFiles) Name() string { return "state" }

func (c StateFiles) Run(context.Context) []Finding {
	s := c.Store
	l := s.L
	var out []Finding
	var valid []string
	// One move-aside for every corrupt file, as `nexus state repair` does.
	repair := Once(func(ctx context.Context) (string, error) {
		moved, err := s.Repair(ctx)
		var did []string
		for _, m := range moved {
			did = append(did, fmt.Sprintf("moved %s aside to %s", m.Path, filepath.Base(m.MovedTo)))
		}
		return strings.Join(did, "; "), err
	})
	check := func(path string, read func() (bool, error)) bool {
		present, err := read()
		var ce *state.CorruptError
		switch {
		case errors.As(err, &ce):
			out = append(out, fault(fmt.Sprintf("%s is corrupt: %s", path, ce.Reason),
				fmt.Sprintf("move it aside to %s.corrupt-<time> (what `nexus state repair` does) so the tools start afresh, or fix it by hand", filepath.Base(path))).repairedBy(repair))
			return false
		case err != nil:
			out = append(out, fault(fmt.Sprintf("cannot check %s: %v", path, err), "check the file's permissions"))
			return false
		}
		if present {
			valid = append(valid, filepath.Base(path))
		}
		return present
	}
	check(l.PlanPath(), func() (bool, error) { return s.CheckFile(l.PlanPath()) })
	check(l.TasksPath(), func() (bool, error) { return s.CheckFile(l.TasksPath()) })
	var hist *state.History
	if check(l.HistoryPath(), func() (bool, error) {
		ok, err := s.CheckFile(l.HistoryPath())
		if ok && err == nil {
			hist, _, err = s.ReadHistory()
		}
		return ok, err
	}) {
		out = append(out, c.cycles(hist)...)
	}
	check(l.TrackerPath(), func() (bool, error) { return s.CheckFile(l.TrackerPath()) })
	out = append(out, c.memoryAccess(&valid)...)

	if len(out) == 0 || allOK(out) {
		msg := "no state files yet"
		if len(valid) > 0 {
			msg = strings.Join(valid, ", ") + " match their schemas"
			if s.V == nil {
				msg = strings.Join(valid, ", ") + " are valid JSON (schemas not checked: no distribution)"
			}
		}
		if backups := corruptBackups(l); len(backups) > 0 {
			msg += fmt.Sprintf("; %d file(s) moved aside earlier remain (%s): delete them once you no longer need them", len(backups), strings.Join(backups, ", "))
		}
		out = append([]Finding{ok("%s", msg)}, out...)
	}
	return out
}

func allOK(fs []Finding) bool { return AllOK(fs) }

// cycles checks the history cycles nexus itself would write (schema_version
// state.SchemaVersion) against the cycle schema; others are read leniently
// (digest C9) and only have to be objects. History is append-only, so a bad
// cycle is reported, never rewritten.
func (c StateFiles) cycles(h *state.History) []Finding {
	path := c.Store.L.HistoryPath()
	var bad []string
	checked, legacy := 0, 0
	for i, raw := range h.Cycles {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			bad = append(bad, fmt.Sprintf("cycle %d: %v", i, err))
			continue
		}
		m, isObj := v.(map[string]any)
		if !isObj {
			bad = append(bad, fmt.Sprintf("cycle %d is not an object", i))
			continue
		}
		if sv, _ := m["schema_version"].(string); sv != state.SchemaVersion || c.Store.V == nil {
			legacy++
			continue
		}
		checked++
		ps, err := c.Store.V.Validate(schema.StateHistory+"#/properties/cycles/items", v)
		if err != nil {
			return []Finding{fault(fmt.Sprintf("cannot check the cycles of %s: %v", path, err), "run `nexus validate` to check the distribution's schemas")}
		}
		for _, p := range significant(ps) {
			bad = append(bad, fmt.Sprintf("/cycles/%d%s: %s", i, p.Pointer, p.Message))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	if len(bad) > maxListed {
		bad = append(bad[:maxListed], fmt.Sprintf("and %d more", len(bad)-maxListed))
	}
	return []Finding{warn(fmt.Sprintf("%s has cycles that do not match the cycle schema (nexus reads them leniently): %s", path, strings.Join(bad, "; ")),
		"history.json is append-only and nexus never rewrites past cycles; if a cycle was edited by hand, restore it from git (`git log -p .nexus/history.json`)")}
}

// memoryAccess checks each line of memory-access.jsonl. Readers skip bad
// lines (digest §5.1) and the next write drops them, so they are a warning;
// the fix rewrites the log with only the valid records, under its lock.
func (c StateFiles) memoryAccess(valid *[]string) []Finding {
	s := c.Store
	path := s.L.MemoryAccessPath()
	b, present, err := state.ReadStable(path)
	if err != nil {
		return []Finding{fault(fmt.Sprintf("cannot read %s: %v", path, err), "check the file's permissions")}
	}
	if !present {
		return nil
	}
	var bad []string
	lines := 0
	for i, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		lines++
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			bad = append(bad, fmt.Sprintf("line %d: not JSON", i+1))
			continue
		}
		if s.V == nil {
			continue
		}
		ps, err := s.V.Validate(schema.StateMemory, v)
		if err != nil {
			return []Finding{fault(fmt.Sprintf("cannot check %s: %v", path, err), "run `nexus validate` to check the distribution's schemas")}
		}
		if ps = significant(ps); len(ps) > 0 {
			bad = append(bad, fmt.Sprintf("line %d: %s", i+1, schema.Join(ps)))
		}
	}
	if len(bad) == 0 {
		*valid = append(*valid, fmt.Sprintf("memory-access.jsonl (%s)", plural(lines, "line")))
		return nil
	}
	n := len(bad)
	if n > maxListed {
		bad = append(bad[:maxListed], fmt.Sprintf("and %d more", n-maxListed))
	}
	return []Finding{warn(fmt.Sprintf("%s: %d of %d lines do not match memory-access.schema.json and are ignored: %s", path, n, lines, strings.Join(bad, "; ")),
		"rewrite the log without them (the next memory read would drop them too)").repairedBy(c.dropBadAccess)}
}

func (c StateFiles) dropBadAccess(ctx context.Context) (string, error) {
	s := c.Store
	kept := 0
	// The store's read already skips lines that do not decode; records that
	// decode but break the schema are dropped here.
	err := s.UpdateMemoryAccess(ctx, func(recs []state.MemoryAccess) ([]state.MemoryAccess, error) {
		out := recs[:0]
		for _, r := range recs {
			if s.V != nil {
				b, err := json.Marshal(r)
				if err != nil {
					continue
				}
				var v any
				_ = json.Unmarshal(b, &v)
				if ps, err := s.V.Validate(schema.StateMemory, v); err != nil || len(significant(ps)) > 0 {
					continue
				}
			}
			out = append(out, r)
		}
		kept = len(out)
		return out, nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("rewrote %s with its %d valid records", s.L.MemoryAccessPath(), kept), nil
}

// significant drops the complaints nexus-core tells readers to ignore:
// members a later minor or another harness added.
func significant(ps []schema.Problem) []schema.Problem {
	var out []schema.Problem
	for _, p := range ps {
		if p.Kind != schema.KindAdditionalProperties {
			out = append(out, p)
		}
	}
	return out
}

// corruptBackups lists files `nexus state repair` moved aside.
func corruptBackups(l state.Layout) []string {
	var out []string
	for _, dir := range []string{l.Nexus, l.StateDir(), l.HarnessDir()} {
		entries, _ := l.ReadDir(dir)
		for _, e := range entries {
			if !e.IsDir() && state.IsCorruptBackup(e.Name()) {
				out = append(out, e.Name())
			}
		}
	}
	sort.Strings(out)
	return out
}
