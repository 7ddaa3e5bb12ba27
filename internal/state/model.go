package state

import (
	"github.com/go-json-experiment/json/jsontext"
)

// SchemaVersion is written on new plan, tasks and history records: the
// nexus-core version that introduced the current shapes (digest §1.6).
const SchemaVersion = "0.5"

// Plan is .nexus/state/plan.json.
type Plan struct {
	SchemaVersion   string  `json:"schema_version,omitempty"`
	ID              int64   `json:"id"`
	Topic           string  `json:"topic"`
	Issues          []Issue `json:"issues"`
	ResearchSummary *string `json:"research_summary,omitzero"`
	CreatedAt       string  `json:"created_at"`
	Extra           Extra   `json:",embed"`
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
	Decision    *string           `json:"decision,omitzero"`
	HowAgents   []string          `json:"how_agents,omitzero"`
	HowSummary  map[string]string `json:"how_summary,omitzero"`
	HowAgentIDs map[string]string `json:"how_agent_ids,omitzero"`
	Extra       Extra             `json:",embed"`
}

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
	Extra         Extra    `json:",embed"`
}

// Task is one entry of tasks.json (and of a history cycle).
type Task struct {
	ID               int64   `json:"id"`
	Title            string  `json:"title"`
	Context          string  `json:"context"`
	Approach         *string `json:"approach,omitzero"`
	Acceptance       *string `json:"acceptance,omitzero"`
	Risk             *string `json:"risk,omitzero"`
	Status           string  `json:"status"`
	Deps             []int64 `json:"deps"`
	PlanIssue        *int64  `json:"plan_issue,omitzero"`
	Owner            *string `json:"owner,omitzero"`
	OwnerAgentID     *string `json:"owner_agent_id,omitzero"`
	OwnerReusePolicy *string `json:"owner_reuse_policy,omitzero"`
	CreatedAt        string  `json:"created_at,omitempty"`
	Extra            Extra   `json:",embed"`
}

// History is .nexus/history.json. Cycles stay raw: history is append-only
// and cycles written by other harnesses or versions are never re-encoded.
type History struct {
	SchemaVersion string           `json:"schema_version,omitempty"`
	Cycles        []jsontext.Value `json:"cycles"`
	Extra         Extra            `json:",embed"`
}

// Cycle is a history record as nexus writes it.
type Cycle struct {
	SchemaVersion string         `json:"schema_version"`
	CompletedAt   string         `json:"completed_at"`
	Branch        string         `json:"branch"`
	Plan          jsontext.Value `json:"plan"` // a plan object or null
	Tasks         []Task         `json:"tasks"`
}

// CycleView is the lenient reading of any history record (legacy and
// foreign cycles included): missing fields are zero.
type CycleView struct {
	CompletedAt string           `json:"completed_at"`
	Branch      string           `json:"branch"`
	Plan        jsontext.Value   `json:"plan"`
	Tasks       []jsontext.Value `json:"tasks"`
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
	ResumeCount   *int64   `json:"resume_count,omitzero"`
	Status        string   `json:"status,omitempty"`
	StoppedAt     string   `json:"stopped_at,omitempty"`
	LastMessage   *string  `json:"last_message,omitzero"`
	FilesTouched  []string `json:"files_touched,omitzero"`
	Extra         Extra    `json:",embed"`
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
