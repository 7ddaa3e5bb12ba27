package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
)

// Where the ages of a file count from.
const (
	AgeFromLastAccess  = "last_access"  // its access record
	AgeFromFirstCommit = "first_commit" // never read: the commit that added it
	AgeFromMtime       = "mtime"        // never read and not committed (or no git)
)

// Signals says which of the three forgetting signals a file meets. A
// signal whose threshold is not configured is never met.
type Signals struct {
	// DaysSinceAccess: at least min_days_since_access days since the last read.
	DaysSinceAccess bool `json:"days_since_access"`
	// CyclesSinceAccess: at least min_cycles_since_access cycles completed
	// (history.json completed_at) after the last read.
	CyclesSinceAccess bool `json:"cycles_since_access"`
	// AccessCount: read at most max_access_count times in all.
	AccessCount bool `json:"access_count"`
}

func (s Signals) count() int {
	n := 0
	for _, b := range []bool{s.DaysSinceAccess, s.CyclesSinceAccess, s.AccessCount} {
		if b {
			n++
		}
	}
	return n
}

// FileReport is one memory file in a gc report.
type FileReport struct {
	// File is the name inside .nexus/memory/ (slash-separated); Path the
	// absolute path.
	File string `json:"file"`
	Path string `json:"path"`
	Size int64  `json:"size"`
	// AccessCount, LastAccess and LastAgent come from the access record
	// (zero / empty: never read since tracking began).
	AccessCount int64  `json:"access_count"`
	LastAccess  string `json:"last_access,omitempty"`
	LastAgent   string `json:"last_agent,omitempty"`
	// AgeFrom says what the ages count from (last_access, first_commit,
	// mtime) and Since is that instant.
	AgeFrom           string  `json:"age_from"`
	Since             string  `json:"since"`
	DaysSinceAccess   int     `json:"days_since_access"`
	CyclesSinceAccess int     `json:"cycles_since_access"`
	Signals           Signals `json:"signals"`
	SignalsMet        int     `json:"signals_met"`
	// Eligible: all three thresholds are configured and all three signals
	// are met — what automatic deletion would remove.
	Eligible bool `json:"eligible"`
}

// Report is the `[m:gc]` report. Producing it changes nothing.
type Report struct {
	GeneratedAt string       `json:"generated_at"`
	MemoryDir   string       `json:"memory_dir"`
	Policy      GCPolicy     `json:"policy"`
	Files       []FileReport `json:"files"`
	// Eligible lists the files meeting all three signals.
	Eligible []string `json:"eligible"`
	// Notes explain how ages were found where that was not plain.
	Notes []string `json:"notes,omitempty"`
}

// Report builds the gc report of every regular file under .nexus/memory/
// (hidden files and symlinks are left out: nexus neither reads through
// nor deletes them). It reads the access log, history.json and, when some
// file has never been read, one `git log` for the dates files were first
// committed.
func (m *Manager) Report(ctx context.Context) (*Report, error) {
	now := m.now()
	rep := &Report{GeneratedAt: state.Format(now), MemoryDir: m.Dir(), Policy: m.gc, Files: []FileReport{}, Eligible: []string{}}
	if _, err := os.Stat(m.Dir()); err != nil {
		return rep, nil // no memory directory, nothing to report
	}
	// git log runs beside the walk and the reads below; it is told which
	// files it must date once they are known.
	scan := m.startFirstCommits(ctx)
	wanted := map[string]bool{}
	defer func() {
		if scan != nil {
			scan.result(nil)
		}
	}()
	files, err := m.listFiles()
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return rep, nil
	}
	recs, err := state.ReadMemoryAccess(m.store.L.MemoryAccessPath())
	if err != nil {
		return nil, err
	}
	byPath := make(map[string]state.MemoryAccess, len(recs))
	for _, r := range recs {
		byPath[filepath.Clean(r.Path)] = r
	}
	cycles, err := m.cycleTimes()
	if err != nil {
		return nil, err
	}

	var neverRead []int
	for _, f := range files {
		fr := FileReport{File: f.rel, Path: filepath.Join(m.Dir(), filepath.FromSlash(f.rel)), Size: f.size}
		if r, ok := byPath[fr.Path]; ok {
			if t, ok := parseTime(r.LastAccessedTS); ok {
				fr.AccessCount, fr.LastAccess, fr.LastAgent = r.AccessCount, r.LastAccessedTS, r.LastAgent
				fr.AgeFrom, fr.Since = AgeFromLastAccess, state.Format(t)
			}
		}
		if fr.AgeFrom == "" {
			fr.AgeFrom, fr.Since = AgeFromMtime, state.Format(f.mtime)
			neverRead = append(neverRead, len(rep.Files))
			wanted[f.rel] = true
		}
		rep.Files = append(rep.Files, fr)
	}
	firsts, err := scan.result(wanted)
	scan = nil
	if len(neverRead) > 0 {
		if err != nil {
			rep.Notes = append(rep.Notes, "never-read files age from their modification time: "+err.Error())
		}
		for _, i := range neverRead {
			if t, ok := firsts[rep.Files[i].File]; ok {
				rep.Files[i].AgeFrom, rep.Files[i].Since = AgeFromFirstCommit, state.Format(t)
			}
		}
	}
	for i := range rep.Files {
		fr := &rep.Files[i]
		since, _ := parseTime(fr.Since)
		if d := now.Sub(since); d > 0 {
			fr.DaysSinceAccess = int(d / (24 * time.Hour))
		}
		// cycles completed strictly after the last read
		fr.CyclesSinceAccess = len(cycles) - sort.Search(len(cycles), func(j int) bool { return cycles[j].After(since) })
		p := m.gc
		fr.Signals = Signals{
			DaysSinceAccess:   p.MinDaysSinceAccess != nil && fr.DaysSinceAccess >= *p.MinDaysSinceAccess,
			CyclesSinceAccess: p.MinCyclesSinceAccess != nil && fr.CyclesSinceAccess >= *p.MinCyclesSinceAccess,
			AccessCount:       p.MaxAccessCount != nil && fr.AccessCount <= int64(*p.MaxAccessCount),
		}
		fr.SignalsMet = fr.Signals.count()
		fr.Eligible = p.complete() && fr.SignalsMet == 3
		if fr.Eligible {
			rep.Eligible = append(rep.Eligible, fr.File)
		}
	}
	if !m.gc.complete() {
		rep.Notes = append(rep.Notes, "not every signal has a threshold (memory.gc.min_days_since_access, memory.gc.min_cycles_since_access, memory.gc.max_access_count); a signal without one is never met")
	}
	return rep, nil
}

type memFile struct {
	rel   string // slash-separated, inside the memory dir
	size  int64
	mtime time.Time
}

// listFiles walks the memory directory without following symlinks.
func (m *Manager) listFiles() ([]memFile, error) {
	dir := m.Dir()
	var out []memFile
	// Bounded (depth and entries) and never into a symlinked folder.
	err := m.store.L.Walk(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if p == dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, memFile{rel: filepath.ToSlash(rel), size: info.Size(), mtime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out, nil
}

// cycleTimes returns the completed_at instants of history.json, sorted.
// Cycles of any harness or version count; one without a readable
// completed_at is skipped.
func (m *Manager) cycleTimes() ([]time.Time, error) {
	h, ok, err := m.store.ReadHistory()
	if err != nil || !ok {
		return nil, err
	}
	out := make([]time.Time, 0, len(h.Cycles))
	for _, raw := range h.Cycles {
		var c state.CycleView
		if json.Unmarshal(raw, &c) != nil {
			continue
		}
		if t, ok := parseTime(c.CompletedAt); ok {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out, nil
}

// parseTime reads an RFC 3339 timestamp.
func parseTime(s string) (time.Time, bool) {
	t := state.AccessTime(s)
	if t.IsZero() {
		t2, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}, false
		}
		t = t2
	}
	return t, true
}

// Deletion reasons recorded in commit messages.
const (
	reasonManual = "chosen by the user (nexus memory gc --delete)"
	reasonAuto   = "automatic gc: each file met all three forgetting signals"
)

// AutoGC deletes the files that meet all three signals, when the
// configuration enables automatic deletion (memory.gc.auto with all three
// thresholds). Otherwise, or when no file qualifies, it does nothing and
// returns "". A refusal (no git repository, uncommitted edits) is
// reported in the message, not as an error: nothing was deleted.
func (m *Manager) AutoGC(ctx context.Context) (string, error) {
	if !m.gc.Auto || !m.gc.complete() {
		return "", nil
	}
	rep, err := m.Report(ctx)
	if err != nil {
		return "", err
	}
	if len(rep.Eligible) == 0 {
		return "", nil
	}
	res, err := m.deleteFiles(ctx, rep.Eligible, m.autoReason(), true)
	var refused *RefusedError
	if errors.As(err, &refused) {
		return "automatic memory gc deleted nothing: " + refused.Error(), nil
	}
	if err != nil {
		return "", err
	}
	return res.Summary(), nil
}

func (m *Manager) autoReason() string {
	p := m.gc
	return fmt.Sprintf("%s (at least %d days and %d completed cycles since the last read, read at most %d times)",
		reasonAuto, *p.MinDaysSinceAccess, *p.MinCyclesSinceAccess, *p.MaxAccessCount)
}

// Delete removes the chosen memory files in one git commit (see
// deleteFiles). names are file names inside .nexus/memory/ (a leading
// ".nexus/memory/" or the absolute path is accepted too).
func (m *Manager) Delete(ctx context.Context, names []string) (*DeleteResult, error) {
	return m.deleteFiles(ctx, names, reasonManual, false)
}

// TaskCloseHook is the function to install as tools.Env.OnTaskClose: it
// runs AutoGC after a successful task_close and hands the outcome to
// Options.OnAutoGC.
func (m *Manager) TaskCloseHook(ctx context.Context) {
	msg, err := m.AutoGC(ctx)
	if m.onAutoGC != nil && (msg != "" || err != nil) {
		m.onAutoGC(msg, err)
	}
}

// Text renders a report for people.
func (r *Report) Text() string {
	var b strings.Builder
	if len(r.Files) == 0 {
		fmt.Fprintf(&b, "No memory files in %s.\n", r.MemoryDir)
		return b.String()
	}
	p := r.Policy
	th := func(v *int) string {
		if v == nil {
			return "unset"
		}
		return fmt.Sprint(*v)
	}
	fmt.Fprintf(&b, "Memory gc report for %s (%d files). Nothing was deleted.\n", r.MemoryDir, len(r.Files))
	fmt.Fprintf(&b, "Signals: D = days since last read >= %s, C = completed cycles since last read >= %s, N = reads <= %s; automatic deletion %s.\n\n",
		th(p.MinDaysSinceAccess), th(p.MinCyclesSinceAccess), th(p.MaxAccessCount), onOff(p.Auto && p.complete()))
	fmt.Fprintf(&b, "%-40s %-24s %5s %6s %5s %8s  %s\n", "FILE", "LAST READ", "READS", "CYCLES", "DAYS", "SIZE", "SIGNALS")
	for _, f := range r.Files {
		last := f.LastAccess
		if last == "" {
			last = "never (" + strings.ReplaceAll(f.AgeFrom, "_", " ") + ")"
		}
		sig := []byte("---")
		if f.Signals.DaysSinceAccess {
			sig[0] = 'D'
		}
		if f.Signals.CyclesSinceAccess {
			sig[1] = 'C'
		}
		if f.Signals.AccessCount {
			sig[2] = 'N'
		}
		mark := ""
		if f.Eligible {
			mark = "  all three"
		}
		fmt.Fprintf(&b, "%-40s %-24s %5d %6d %5d %8d  %s%s\n", f.File, last, f.AccessCount, f.CyclesSinceAccess, f.DaysSinceAccess, f.Size, sig, mark)
	}
	if len(r.Eligible) > 0 {
		fmt.Fprintf(&b, "\n%d file(s) meet all three signals: %s\n", len(r.Eligible), strings.Join(r.Eligible, ", "))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	return b.String()
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
