package view

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/maphash"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nexus-harness/nexus/internal/harnessid"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/memory"
)

// The page's sections; each is rebuilt from the files it reads when one of
// them changes (watch.go maps paths to sections).
const (
	secPlan      = "plan"
	secTasks     = "tasks"
	secAgents    = "agents"
	secHistory   = "history"
	secMemory    = "memory"
	secDecisions = "decisions"
)

var sectionNames = []string{secPlan, secTasks, secAgents, secHistory, secMemory, secDecisions}

// What one row of a view carries of a long text: titles and messages in
// state are unbounded, the page shows their start (the tables' cells and
// the graph's nodes have no room for more).
const (
	maxTitle   = 300
	maxShort   = 120
	maxMessage = 2000
	maxFiles   = 200 // files touched listed per agent
	maxAgents  = 1000
)

// clip cuts s to at most n runes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i = range s {
		if k == n {
			break
		}
		k++
	}
	return s[:i] + "…"
}

// planData is the plan section.
type planData struct {
	Exists    bool        `json:"exists"`
	ID        int64       `json:"id,omitempty"`
	Topic     string      `json:"topic,omitempty"`
	CreatedAt string      `json:"created_at,omitempty"`
	Issues    []planIssue `json:"issues"`
	Decided   int         `json:"decided"`
}

type planIssue struct {
	ID       int64  `json:"id"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Decision string `json:"decision,omitempty"`
}

func (s *Server) buildPlan(context.Context) (any, error) {
	p, ok, err := s.store.ReadPlan()
	if err != nil {
		return nil, err
	}
	d := &planData{Issues: []planIssue{}}
	if !ok {
		return d, nil
	}
	d.Exists, d.ID, d.Topic, d.CreatedAt = true, p.ID, clip(p.Topic, maxMessage), p.CreatedAt
	for _, is := range p.Issues {
		d.Issues = append(d.Issues, planIssue{ID: is.ID, Title: clip(is.Title, maxMessage), Status: is.Status, Decision: clip(deref(is.Decision), 4*maxMessage)})
		if is.Status == state.IssueDecided {
			d.Decided++
		}
	}
	return d, nil
}

// tasksData is the tasks section: the file's tasks and their graph.
type tasksData struct {
	Exists bool
	Goal   string
	g      *taskGraph
	counts map[string]int
}

func (s *Server) buildTasks(context.Context) (any, error) {
	t, ok, err := s.store.ReadTasks()
	if err != nil {
		return nil, err
	}
	d := &tasksData{counts: map[string]int{}}
	if !ok {
		d.g = buildGraph(nil)
		return d, nil
	}
	// The store's value is shared with its cache: the graph only reads it.
	d.Exists, d.Goal, d.g = true, clip(t.Goal, maxMessage), buildGraph(t.Tasks)
	for _, x := range t.Tasks {
		d.counts[x.Status]++
	}
	return d, nil
}

// agentsData is every harness's tracker.
type agentsData struct {
	Harnesses []harnessAgents `json:"harnesses"`
	Running   int             `json:"running"`
}

type harnessAgents struct {
	ID      string       `json:"id"`
	Agents  []agentEntry `json:"agents"`
	Omitted int          `json:"omitted,omitempty"` // older entries left out
	Error   string       `json:"error,omitempty"`
}

type agentEntry struct {
	Role         string   `json:"role"`
	AgentID      string   `json:"agent_id,omitempty"`
	Status       string   `json:"status,omitempty"`
	StartedAt    string   `json:"started_at"`
	StoppedAt    string   `json:"stopped_at,omitempty"`
	ResumedAt    string   `json:"last_resumed_at,omitempty"`
	ResumeCount  int64    `json:"resume_count"`
	FilesTouched []string `json:"files_touched"`
	FilesCount   int      `json:"files_count"`
	LastMessage  string   `json:"last_message,omitempty"`
}

// harnessIDs lists the harness namespaces under state/: folders whose
// name is a valid harness id (this harness's own always included).
func (s *Server) harnessIDs() ([]string, error) {
	ents, err := s.o.Layout.ReadDir(s.o.Layout.StateDir())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ids := []string{s.o.Layout.HarnessID}
	for _, e := range ents {
		if e.IsDir() && harnessid.Valid(e.Name()) && e.Name() != s.o.Layout.HarnessID {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids[1:])
	return ids, nil
}

// layoutOf is the project's layout under another harness id.
func (s *Server) layoutOf(id string) state.Layout {
	l := s.o.Layout
	l.HarnessID = id
	return l
}

func (s *Server) buildAgents(context.Context) (any, error) {
	ids, err := s.harnessIDs()
	if err != nil {
		return nil, err
	}
	d := &agentsData{Harnesses: []harnessAgents{}}
	for _, id := range ids {
		h := harnessAgents{ID: id, Agents: []agentEntry{}}
		// A store per namespace, read-only: no validator, no writes.
		entries, ok, err := state.New(s.layoutOf(id), nil).ReadTracker()
		switch {
		case err != nil:
			h.Error = err.Error()
		case !ok && id != s.o.Layout.HarnessID:
			continue // a namespace without a tracker (memory access only)
		}
		if len(entries) > maxAgents {
			h.Omitted = len(entries) - maxAgents
			entries = entries[len(entries)-maxAgents:]
		}
		for _, e := range entries {
			a := agentEntry{Role: clip(e.AgentName, maxShort), AgentID: clip(e.AgentID, maxShort), Status: e.Status,
				StartedAt: e.StartedAt, StoppedAt: e.StoppedAt, ResumedAt: e.LastResumedAt,
				LastMessage: clip(deref(e.LastMessage), maxMessage), FilesCount: len(e.FilesTouched), FilesTouched: []string{}}
			if e.ResumeCount != nil {
				a.ResumeCount = *e.ResumeCount
			}
			for i, f := range e.FilesTouched {
				if i == maxFiles {
					break
				}
				a.FilesTouched = append(a.FilesTouched, clip(f, maxTitle))
			}
			if a.Status == state.AgentRunning || (a.Status == "" && a.StoppedAt == "") {
				d.Running++
			}
			h.Agents = append(h.Agents, a)
		}
		d.Harnesses = append(d.Harnesses, h)
	}
	return d, nil
}

// historyData is what the plan view shows of history.json before a
// search: the number of cycles and the latest ones.
type historyData struct {
	Result map[string]any
}

// historyDefault is how many past cycles the plan view lists.
const historyDefault = 10

func (s *Server) buildHistory(context.Context) (any, error) {
	r, err := s.o.History(s.store, "", historyDefault)
	if err != nil {
		return nil, err
	}
	return &historyData{Result: r}, nil
}

// memoryData is the memory section.
type memoryData struct {
	Notes    []memoryNote     `json:"notes"`
	Policy   memory.GCPolicy  `json:"policy"`
	Eligible []string         `json:"eligible"`
	Remarks  []string         `json:"remarks"`
	Harness  string           `json:"harness"`
	Logs     []string         `json:"logs"` // the harness ids whose access logs were merged
	Signals  map[string]int64 `json:"signals"`
}

type memoryNote struct {
	File     string `json:"file"`
	Category string `json:"category,omitempty"`
	Size     int64  `json:"size"`
	// Reads, LastAccess and LastAgent merge every harness's access log.
	Reads      int64  `json:"reads"`
	LastAccess string `json:"last_access,omitempty"`
	LastAgent  string `json:"last_agent,omitempty"`
	// The gc report's view (this harness's log, as [m:gc] sees it).
	AgeFrom           string         `json:"age_from"`
	Since             string         `json:"since"`
	DaysSinceAccess   int            `json:"days_since_access"`
	CyclesSinceAccess int            `json:"cycles_since_access"`
	GCReads           int64          `json:"gc_reads"`
	Signals           memory.Signals `json:"signals"`
	SignalsMet        int            `json:"signals_met"`
	Eligible          bool           `json:"eligible"`
}

func (s *Server) buildMemory(ctx context.Context) (any, error) {
	if s.o.Memory == nil {
		if s.o.MemoryErr != nil {
			return nil, s.o.MemoryErr
		}
		return nil, errors.New("memory is not available for this project")
	}
	rep, err := s.o.Memory.Report(ctx)
	if err != nil {
		return nil, err
	}
	ids, err := s.harnessIDs()
	if err != nil {
		return nil, err
	}
	d := &memoryData{Notes: make([]memoryNote, 0, len(rep.Files)), Policy: rep.Policy, Eligible: rep.Eligible,
		Remarks: rep.Notes, Harness: s.o.Layout.HarnessID, Logs: []string{}}
	if d.Remarks == nil {
		d.Remarks = []string{}
	}
	var logs []string
	for _, id := range ids {
		p := s.layoutOf(id).MemoryAccessPath()
		if state.Exists(p) {
			logs = append(logs, p)
			d.Logs = append(d.Logs, id)
		}
	}
	merged, err := memory.MergeLogs(nil, logs...)
	if err != nil {
		return nil, err
	}
	byPath := make(map[string]state.MemoryAccess, len(merged))
	for _, r := range merged {
		byPath[filepath.Clean(r.Path)] = r
	}
	for _, f := range rep.Files {
		n := memoryNote{File: f.File, Category: s.o.Memory.CategoryOf(f.File), Size: f.Size,
			AgeFrom: f.AgeFrom, Since: f.Since, DaysSinceAccess: f.DaysSinceAccess, CyclesSinceAccess: f.CyclesSinceAccess,
			GCReads: f.AccessCount, Signals: f.Signals, SignalsMet: f.SignalsMet, Eligible: f.Eligible}
		if r, ok := byPath[filepath.Clean(f.Path)]; ok {
			n.Reads, n.LastAccess, n.LastAgent = r.AccessCount, r.LastAccessedTS, clip(r.LastAgent, maxShort)
		}
		d.Notes = append(d.Notes, n)
	}
	return d, nil
}

// decisionsData is the decisions section.
type decisionsData struct {
	Enabled bool
	x       *DecisionExport
	byNum   map[int]int
}

func (s *Server) buildDecisions(ctx context.Context) (any, error) {
	if s.o.Decisions == nil {
		return &decisionsData{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	x, err := s.o.Decisions.Export(ctx)
	if err != nil {
		return nil, err
	}
	d := &decisionsData{Enabled: true, x: x, byNum: make(map[int]int, len(x.Decisions))}
	for i := range x.Decisions {
		r := &x.Decisions[i]
		r.Title = clip(r.Title, maxTitle)
		if _, dup := d.byNum[r.Number]; !dup {
			d.byNum[r.Number] = i
		}
	}
	if x.Store != "" {
		s.watchDecisionStore(x.Store)
	}
	return d, nil
}

// lowerQuery normalises a search box's text.
func lowerQuery(q string) string { return strings.ToLower(strings.TrimSpace(clip(q, 1000))) }

// hashInto hashes what the page shows of the tasks (ids, titles, status,
// owners, dependencies), without encoding them.
func (d *tasksData) hashInto(h *maphash.Hash) {
	var b [8]byte
	num := func(v int64) {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	h.WriteString(d.Goal)
	num(int64(len(d.g.tasks)))
	for i := range d.g.tasks {
		t := &d.g.tasks[i]
		num(t.ID)
		h.WriteString(t.Title)
		h.WriteByte(0)
		h.WriteString(t.Status)
		h.WriteByte(0)
		h.WriteString(deref(t.Owner))
		h.WriteByte(0)
		num(int64(len(t.Deps)))
		for _, dep := range t.Deps {
			num(dep)
		}
	}
}

func (d *decisionsData) hashInto(h *maphash.Hash) {
	if d.x == nil {
		h.WriteString("off")
		return
	}
	json.NewEncoder(h).Encode(d.x)
}
