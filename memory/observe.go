package memory

import (
	"context"
	"path/filepath"
	"sort"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
)

// Observe records that agent read the memory file at path at the given
// time: the file's line in .nexus/state/<harness-id>/memory-access.jsonl
// gets access_count + 1, and last_accessed_ts / last_agent when this read
// is the newest one seen (hooks run as separate processes, so reads may
// be recorded out of order). The log is rewritten atomically under its
// lock and the changed line is checked against memory-access.schema.json.
//
// path may be absolute or relative to the project root; the record is
// keyed by the cleaned absolute path of the file inside .nexus/memory/.
// A path that is not a regular file there (or reaches outside it through
// a symlink) is not recorded: the error wraps ErrNotMemoryFile. An empty
// agent is recorded as "lead"; a zero time means now.
func (m *Manager) Observe(ctx context.Context, path, agent string, at time.Time) error {
	key, err := m.resolve(path)
	if err != nil {
		return err
	}
	if agent == "" {
		agent = LeadAgent
	}
	if at.IsZero() {
		at = m.now()
	}
	ts := state.Format(at)
	_, err = m.store.UpsertMemoryAccess(ctx, key, func(old state.MemoryAccess, found bool) state.MemoryAccess {
		old.AccessCount++
		if !found || !state.AccessTime(old.LastAccessedTS).After(at) {
			old.LastAccessedTS, old.LastAgent = ts, agent
		}
		return old
	})
	return err
}

// ObserveToolCall records every memory file a finished host tool call
// read (see ReadsOf) and returns the record keys it recorded.
func (m *Manager) ObserveToolCall(ctx context.Context, tool string, input []byte, cwd, agent string, at time.Time) ([]string, error) {
	files := m.ReadsOf(tool, input, cwd)
	for _, f := range files {
		if err := m.Observe(ctx, f, agent, at); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// Records returns this harness's access records, sorted by path.
func (m *Manager) Records() ([]state.MemoryAccess, error) {
	recs, err := state.ReadMemoryAccess(m.store.L.MemoryAccessPath())
	if err != nil {
		return nil, err
	}
	sortRecords(recs)
	return recs, nil
}

// MergeLogs merges access logs by path with the outputs contract's rule:
// counts are summed, the newest timestamp wins and brings its agent. base
// is usually this harness's own records; files are other harnesses' logs
// (malformed lines in them are skipped). Nothing is written.
func MergeLogs(base []state.MemoryAccess, files ...string) ([]state.MemoryAccess, error) {
	byPath := map[string]int{}
	var out []state.MemoryAccess
	add := func(r state.MemoryAccess) {
		r.Path = filepath.Clean(r.Path)
		if i, ok := byPath[r.Path]; ok {
			out[i] = state.MergeAccess(out[i], r)
			return
		}
		byPath[r.Path] = len(out)
		out = append(out, r)
	}
	for _, r := range base {
		add(r)
	}
	for _, f := range files {
		recs, err := state.ReadMemoryAccess(f)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			add(r)
		}
	}
	sortRecords(out)
	return out, nil
}

func sortRecords(recs []state.MemoryAccess) {
	sort.Slice(recs, func(i, j int) bool { return recs[i].Path < recs[j].Path })
}
