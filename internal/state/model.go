package state

import "encoding/json"

// SchemaVersion is written on new plan, tasks and history records: the
// nexus-core version that introduced the current shapes (digest §1.6).
const SchemaVersion = "0.5"

// Plan is .nexus/state/plan.json.
type Plan struct {
	SchemaVersion   string  `json:"schema_version,omitempty"`
	ID              int64   `json:"id"`
	Topic           string  `json:"topic"`
	Issues          []Issue `json:"issues"`
	ResearchSummary *string `json:"research_summary,omitempty"`
	CreatedAt       string  `json:"created_at"`
	Extra           Extra   `json:"-"`
}

type planPlain Plan

// UnmarshalJSON keeps unknown members in Extra.
func (p *Plan) UnmarshalJSON(b []byte) error {
	return decodeWithExtra(b, (*planPlain)(p), &p.Extra)
}

// MarshalJSON writes unknown members back.
func (p Plan) MarshalJSON() ([]byte, error) {
	if p.Issues == nil {
		p.Issues = []Issue{}
	}
	return encodeWithExtra(planPlain(p), p.Extra)
}

// Issue statuses.
const (
	IssuePending = "pending"
	IssueDecided = "decided"
)

// Issue is one agenda item of a plan.
type Issue struct {
	ID          int64             `json:"id"`
	Title       string            `json:"title"`
	Status      string            `json:"status"`
	Decision    *string           `json:"decision,omitempty"`
	HowAgents   []string          `json:"how_agents,omitzero"`
	HowSummary  map[string]string `json:"how_summary,omitzero"`
	HowAgentIDs map[string]string `json:"how_agent_ids,omitzero"`
	Extra       Extra             `json:"-"`
}

type issuePlain Issue

// UnmarshalJSON keeps unknown members in Extra.
func (i *Issue) UnmarshalJSON(b []byte) error {
	return decodeWithExtra(b, (*issuePlain)(i), &i.Extra)
}

// MarshalJSON writes unknown members back.
func (i Issue) MarshalJSON() ([]byte, error) { return encodeWithExtra(issuePlain(i), i.Extra) }

// Task statuses.
const (
	TaskPending    = "pending"
	TaskInProgress = "in_progress"
	TaskCompleted  = "completed"
)

// Tasks is .nexus/state/tasks.json.
type Tasks struct {
	SchemaVersion string   `json:"schema_version,omitempty"`
	Goal          string   `json:"goal"`
	Decisions     []string `json:"decisions"`
	Tasks         []Task   `json:"tasks"`
	Extra         Extra    `json:"-"`
}

type tasksPlain Tasks

// UnmarshalJSON keeps unknown members in Extra.
func (t *Tasks) UnmarshalJSON(b []byte) error {
	return decodeWithExtra(b, (*tasksPlain)(t), &t.Extra)
}

// MarshalJSON writes unknown members back; required arrays are never null.
func (t Tasks) MarshalJSON() ([]byte, error) {
	if t.Decisions == nil {
		t.Decisions = []string{}
	}
	if t.Tasks == nil {
		t.Tasks = []Task{}
	}
	return encodeWithExtra(tasksPlain(t), t.Extra)
}

// Task is one entry of tasks.json (and of a history cycle).
type Task struct {
	ID               int64   `json:"id"`
	Title            string  `json:"title"`
	Context          string  `json:"context"`
	Approach         *string `json:"approach,omitempty"`
	Acceptance       *string `json:"acceptance,omitempty"`
	Risk             *string `json:"risk,omitempty"`
	Status           string  `json:"status"`
	Deps             []int64 `json:"deps"`
	PlanIssue        *int64  `json:"plan_issue,omitempty"`
	Owner            *string `json:"owner,omitempty"`
	OwnerAgentID     *string `json:"owner_agent_id,omitempty"`
	OwnerReusePolicy *string `json:"owner_reuse_policy,omitempty"`
	CreatedAt        string  `json:"created_at,omitempty"`
	Extra            Extra   `json:"-"`
}

type taskPlain Task

// UnmarshalJSON keeps unknown members in Extra.
func (t *Task) UnmarshalJSON(b []byte) error {
	return decodeWithExtra(b, (*taskPlain)(t), &t.Extra)
}

// MarshalJSON writes unknown members back; deps is always an array.
func (t Task) MarshalJSON() ([]byte, error) {
	if t.Deps == nil {
		t.Deps = []int64{}
	}
	return encodeWithExtra(taskPlain(t), t.Extra)
}

// History is .nexus/history.json. Cycles stay raw: history is append-only
// and cycles written by other harnesses or versions are never re-encoded.
type History struct {
	SchemaVersion string            `json:"schema_version,omitempty"`
	Cycles        []json.RawMessage `json:"cycles"`
	Extra         Extra             `json:"-"`
}

type historyPlain History

// UnmarshalJSON keeps unknown members in Extra.
func (h *History) UnmarshalJSON(b []byte) error {
	return decodeWithExtra(b, (*historyPlain)(h), &h.Extra)
}

// MarshalJSON writes unknown members back.
func (h History) MarshalJSON() ([]byte, error) {
	if h.Cycles == nil {
		h.Cycles = []json.RawMessage{}
	}
	return encodeWithExtra(historyPlain(h), h.Extra)
}

// Cycle is a history record as nexus writes it.
type Cycle struct {
	SchemaVersion string          `json:"schema_version"`
	CompletedAt   string          `json:"completed_at"`
	Branch        string          `json:"branch"`
	Plan          json.RawMessage `json:"plan"` // a plan object or null
	Tasks         []Task          `json:"tasks"`
}

// CycleView is the lenient reading of any history record (legacy and
// foreign cycles included): missing fields are zero.
type CycleView struct {
	CompletedAt string            `json:"completed_at"`
	Branch      string            `json:"branch"`
	Plan        json.RawMessage   `json:"plan"`
	Tasks       []json.RawMessage `json:"tasks"`
}

// Tracker statuses.
const (
	AgentRunning   = "running"
	AgentCompleted = "completed"
)

// TrackerEntry is one element of agent-tracker.json.
type TrackerEntry struct {
	HarnessID     string   `json:"harness_id"`
	AgentName     string   `json:"agent_name,omitempty"`
	AgentID       string   `json:"agent_id,omitempty"`
	StartedAt     string   `json:"started_at"`
	LastResumedAt string   `json:"last_resumed_at,omitempty"`
	ResumeCount   *int64   `json:"resume_count,omitempty"`
	Status        string   `json:"status,omitempty"`
	StoppedAt     string   `json:"stopped_at,omitempty"`
	LastMessage   *string  `json:"last_message,omitempty"`
	FilesTouched  []string `json:"files_touched,omitzero"`
	Extra         Extra    `json:"-"`
}

type trackerPlain TrackerEntry

// UnmarshalJSON keeps unknown members in Extra.
func (e *TrackerEntry) UnmarshalJSON(b []byte) error {
	return decodeWithExtra(b, (*trackerPlain)(e), &e.Extra)
}

// MarshalJSON writes unknown members back.
func (e TrackerEntry) MarshalJSON() ([]byte, error) {
	return encodeWithExtra(trackerPlain(e), e.Extra)
}

// MemoryAccess is one line of memory-access.jsonl.
type MemoryAccess struct {
	Path           string `json:"path"`
	LastAccessedTS string `json:"last_accessed_ts"`
	AccessCount    int64  `json:"access_count"`
	LastAgent      string `json:"last_agent"`
	SchemaVersion  string `json:"schema_version,omitempty"`
}

// ToolLogLine is one line of the tool log.
type ToolLogLine struct {
	TS      string `json:"ts"`
	AgentID string `json:"agent_id,omitempty"` // empty for Lead
	Agent   string `json:"agent,omitempty"`    // bare role name, when known
	Tool    string `json:"tool"`
	File    string `json:"file,omitempty"`
	Status  string `json:"status"` // ok, error, denied
	Error   string `json:"error,omitempty"`
}

// Ptr returns a pointer to v (for optional fields).
func Ptr[T any](v T) *T { return &v }
