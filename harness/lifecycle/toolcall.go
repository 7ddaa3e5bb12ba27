package lifecycle

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/internal/state"
)

// dir is where relative tool paths resolve: the host's working directory,
// else the project root.
func (e *Engine) dir(ev Event) string {
	if ev.Dir != "" {
		return ev.Dir
	}
	return e.o.Store.L.Project
}

func (e *Engine) classify(ctx context.Context, ev Event) (*gate.Gate, gate.Classification, error) {
	g, err := e.Gate(ctx)
	if err != nil {
		return nil, gate.Classification{}, err
	}
	return g, g.Classify(ev.Tool, ev.ToolInput, ev.ToolClasses, e.dir(ev)), nil
}

// preToolUse runs the gate. A denied call is logged in the tool log (it
// never reaches post_tool_use).
func (e *Engine) preToolUse(ctx context.Context, ev Event) (Reply, error) {
	g, cl, err := e.classify(ctx, ev)
	if err != nil {
		return Reply{}, err
	}
	s := e.o.Store
	v := g.Check(gate.Call{Role: ev.Role(), Classification: cl}, state.Exists(s.L.TasksPath()), s.L.Nexus)
	switch v.Decision {
	case gate.Deny:
		// The tool log records the denial; nexus.log only at debug level.
		if err := e.appendToolLog(ctx, ev, cl, StatusDenied, v.Reason); err != nil {
			e.log.Log(ctx, "warn", PreToolUse, ev.AgentID, "tool log: "+err.Error())
		}
		e.log.Log(ctx, "debug", PreToolUse, ev.AgentID, v.Reason)
		return Reply{Decision: gate.Deny, Reason: v.Reason}, nil
	}
	if u := e.o.Host.Unfollowed; u != nil && u(ev.Tool, ev.ToolInput) {
		// No post_tool_use will log this call: log it now, as run.
		if err := e.appendToolLog(ctx, ev, cl, StatusOK, ""); err != nil {
			e.log.Log(ctx, "warn", PreToolUse, ev.AgentID, "tool log: "+err.Error())
		}
	}
	if v.Decision == gate.Warn {
		e.log.Log(ctx, "debug", PreToolUse, ev.AgentID, v.Reason)
		return Reply{Context: v.Reason, Notice: v.Reason}, nil
	}
	return Reply{}, nil
}

// postToolUse appends the tool-log line and reports memory reads.
func (e *Engine) postToolUse(ctx context.Context, ev Event) (Reply, error) {
	_, cl, err := e.classify(ctx, ev)
	if err != nil {
		return Reply{}, err
	}
	status := ev.Status
	if status == "" {
		status = StatusOK
	}
	if err := e.appendToolLog(ctx, ev, cl, status, ev.Error); err != nil {
		return Reply{}, err
	}
	var lead string
	if e.o.Host.LeadReminders && ev.AgentID == "" && e.isSpawnTool(ev.Tool) {
		if notes := e.takeReminders(ctx); len(notes) > 0 {
			lead = strings.Join(notes, "\n")
		}
	}
	if status != StatusOK {
		return Reply{Context: lead}, nil
	}
	if e.o.Host.SkillTool != "" && ev.Tool == e.o.Host.SkillTool && ev.AgentID == "" {
		e.skillLoaded(ctx, ev)
	}
	r, err := e.observeReads(ctx, ev, cl)
	if lead != "" {
		r.Context = strings.TrimSpace(lead + "\n" + r.Context)
	}
	return r, err
}

func (e *Engine) isSpawnTool(tool string) bool {
	for _, t := range e.o.Host.SpawnTools {
		if t == tool {
			return true
		}
	}
	return false
}

// observeReads reports memory reads of a successful call.
func (e *Engine) observeReads(ctx context.Context, ev Event, cl gate.Classification) (Reply, error) {
	reads := e.memoryReads(ev, cl)
	if len(reads) == 0 {
		return Reply{}, nil
	}
	if e.o.Memory == nil {
		e.log.Log(ctx, "debug", PostToolUse, ev.AgentID, "memory reads not observed (memory features are off): "+strings.Join(reads, ", "))
		return Reply{}, nil
	}
	who := ev.AgentID
	if who == "" {
		who = "lead"
	}
	for _, f := range reads {
		// A failed observation costs one access count, never the tool call.
		if err := e.o.Memory.Observe(ctx, f, who, e.now()); err != nil {
			e.log.Log(ctx, "warn", PostToolUse, ev.AgentID, "memory read of "+f+" not recorded: "+err.Error())
		}
	}
	return Reply{}, nil
}

// toolReads is implemented by memory handlers that know more ways a tool
// call reads files than nexus's capability map (shell viewers such as
// cat or head, content greps): package memory's Manager does.
type toolReads interface {
	ReadsOf(tool string, input []byte, cwd string) []string
}

// memoryReads returns the files under .nexus/memory/ a successful call read.
func (e *Engine) memoryReads(ev Event, cl gate.Classification) []string {
	if tr, ok := e.o.Memory.(toolReads); ok {
		in, err := json.Marshal(ev.ToolInput)
		if err == nil {
			return tr.ReadsOf(ev.Tool, in, e.dir(ev))
		}
	}
	if !cl.Reads() {
		return nil
	}
	mem := e.o.Store.L.MemoryDir()
	var out []string
	for _, f := range cl.Files {
		rel, err := filepath.Rel(mem, f)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		out = append(out, f)
	}
	return out
}

// maxLoggedError bounds the error text kept in a tool-log line.
const maxLoggedError = 500

func (e *Engine) appendToolLog(ctx context.Context, ev Event, cl gate.Classification, status, errText string) error {
	s := e.o.Store
	line := ToolLogLine{
		TS:      s.Timestamp(),
		AgentID: ev.AgentID,
		Agent:   ev.Role(),
		Tool:    ev.Tool,
		Status:  status,
		Writes:  cl.Writes,
	}
	if len(errText) > maxLoggedError {
		errText = errText[:maxLoggedError] + "…"
	}
	if status != StatusOK {
		line.Error = errText
	}
	for _, f := range cl.Files {
		line.Files = append(line.Files, projectRel(s.L.Project, f))
	}
	if len(line.Files) > 0 {
		line.File = line.Files[0]
	}
	if len(line.Files) < 2 {
		line.Files = nil
	}
	return s.AppendLineNoSync(ctx, s.L.ToolLogPath(), line)
}
