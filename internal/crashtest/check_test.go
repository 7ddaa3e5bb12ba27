package crashtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/schema"
)

// snapshot is what one inspection of a harness's .nexus tree found, every
// file already parsed and checked against its schema.
type snapshot struct {
	Plan    *state.Plan  // nil: no plan.json
	Tasks   *state.Tasks // nil: no tasks.json
	History []cycle      // nil: no history.json
	Tracker []state.TrackerEntry
	ToolLog []lifecycle.ToolLogLine
	// ToolLogTorn: the tool log ends in a line without its newline (a
	// killed append). Readers skip it and the next append cuts it off.
	ToolLogTorn bool
	Access      map[string]state.MemoryAccess // by path
	// Residue lists temporary files killed writers left behind
	// (".<name>.tmp-*"): never read by nexus, and harmless.
	Residue []string
}

// cycle is a history record as the tests compare it.
type cycle struct {
	Plan  *state.Plan  `json:"plan"`
	Tasks []state.Task `json:"tasks"`
}

// inspect reads every state file of one harness under l and checks it:
// plan, tasks, history and tracker parse and match their nexus-core
// schemas; every tool-log and nexus.log line is complete JSON with its
// required fields; every memory-access line matches its schema, one line
// per path. problems is empty when all is well.
func inspect(l state.Layout, v *schema.Set) (*snapshot, []string) {
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	s := &snapshot{Access: map[string]state.MemoryAccess{}}

	jsonFile := func(path, loc string, into any) bool {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return false
		}
		if err != nil {
			bad("read %s: %v", path, err)
			return false
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			bad("%s is not JSON: %v (%d bytes)", path, err, len(b))
			return false
		}
		ps, err := v.Validate(loc, doc)
		if err != nil {
			bad("validate %s: %v", path, err)
		}
		for _, p := range ps {
			// tasks.json's goal "" is what nexus-core's own task_add
			// contract writes although the schema asks for a character
			// (digest C7); the store accepts exactly that.
			if loc == schema.StateTasks && p.Pointer == "/goal" {
				if m, _ := doc.(map[string]any); m["goal"] == "" {
					continue
				}
			}
			bad("%s does not match its schema at %q: %s", path, p.Pointer, p.Message)
		}
		if err := json.Unmarshal(b, into); err != nil {
			bad("decode %s: %v", path, err)
			return false
		}
		return true
	}
	var plan state.Plan
	if jsonFile(l.PlanPath(), schema.StatePlan, &plan) {
		s.Plan = &plan
	}
	var tasks state.Tasks
	if jsonFile(l.TasksPath(), schema.StateTasks, &tasks) {
		s.Tasks = &tasks
	}
	var hist struct {
		Cycles []cycle `json:"cycles"`
	}
	if jsonFile(l.HistoryPath(), schema.StateHistory, &hist) {
		s.History = hist.Cycles
		if s.History == nil {
			s.History = []cycle{}
		}
	}
	jsonFile(l.TrackerPath(), schema.StateTracker, &s.Tracker)

	// Logs: every complete line must be a whole record.
	lines := func(path string) ([][]byte, bool) {
		b, err := os.ReadFile(path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				bad("read %s: %v", path, err)
			}
			return nil, false
		}
		torn := len(b) > 0 && b[len(b)-1] != '\n'
		var out [][]byte
		for _, ln := range bytes.SplitAfter(b, []byte("\n")) {
			if len(ln) == 0 || ln[len(ln)-1] != '\n' {
				continue // the torn tail, reported by the caller
			}
			out = append(out, bytes.TrimSuffix(ln, []byte("\n")))
		}
		return out, torn
	}
	tl, torn := lines(l.ToolLogPath())
	s.ToolLogTorn = torn
	for i, ln := range tl {
		var r lifecycle.ToolLogLine
		dec := json.NewDecoder(bytes.NewReader(ln))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			bad("%s line %d %q: %v", l.ToolLogPath(), i+1, ln, err)
			continue
		}
		if _, err := time.Parse(time.RFC3339Nano, r.TS); err != nil || r.Tool == "" || r.Status == "" {
			bad("%s line %d %q: ts, tool or status missing or malformed", l.ToolLogPath(), i+1, ln)
		}
		s.ToolLog = append(s.ToolLog, r)
	}
	logLines, logTorn := lines(l.LogPath())
	if logTorn {
		bad("%s ends in a torn line (nexus.log is appended with fsync in one write)", l.LogPath())
	}
	for i, ln := range logLines {
		var r lifecycle.LogLine
		if err := json.Unmarshal(ln, &r); err != nil || r.TS == "" || r.Level == "" {
			bad("%s line %d %q: not a log record", l.LogPath(), i+1, ln)
		}
	}
	acc, accTorn := lines(l.MemoryAccessPath())
	if accTorn {
		bad("%s ends in a torn line (it is replaced whole, never appended)", l.MemoryAccessPath())
	}
	for i, ln := range acc {
		var doc any
		if err := json.Unmarshal(ln, &doc); err != nil {
			bad("%s line %d %q: %v", l.MemoryAccessPath(), i+1, ln, err)
			continue
		}
		ps, err := v.Validate(schema.StateMemory, doc)
		if err != nil {
			bad("validate %s: %v", l.MemoryAccessPath(), err)
		}
		for _, p := range ps {
			bad("%s line %d does not match its schema at %q: %s", l.MemoryAccessPath(), i+1, p.Pointer, p.Message)
		}
		var r state.MemoryAccess
		_ = json.Unmarshal(ln, &r)
		if _, dup := s.Access[r.Path]; dup {
			bad("%s has two lines for %s", l.MemoryAccessPath(), r.Path)
		}
		s.Access[r.Path] = r
	}

	// Nothing but whole files and the writers' temporary files: no
	// ".corrupt-" file (nexus never moves a file aside on its own).
	filepath.WalkDir(l.Nexus, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		name := d.Name()
		switch {
		case strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-"):
			s.Residue = append(s.Residue, p)
		case state.IsCorruptBackup(name):
			bad("%s: a state file was moved aside", p)
		}
		return nil
	})
	sort.Strings(s.Residue)
	return s, probs
}
