package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Hook protocols: the payload shapes a hook command reads.
const (
	// HookClaude is Claude Code's command-hook protocol (SubagentStart,
	// PostToolUse, SubagentStop, ...).
	HookClaude = "claude"
	// HookNeutral is nexus's host-neutral event shape (docs/hooks.md).
	HookNeutral = "neutral"
)

// HookFactory runs lifecycle fixtures through a harness's hook command:
// each fixture event becomes the payloads the host would send (HookPayloads),
// and the command runs once per payload in the case's scratch project, with
// NEXUS_RUNTIME_ROOT pointing at its .nexus folder, NEXUS_HARNESS_ID at the
// case's harness namespace (nexus reads both) and, for Claude Code's
// protocol, CLAUDE_PROJECT_DIR at the project. The runner then checks the
// state postconditions exactly as for any other target.
type HookFactory struct {
	// Command is the hook command line (program and arguments).
	Command []string
	// Protocol is HookClaude or HookNeutral.
	Protocol string
	// Env is added to the command's environment (KEY=VALUE).
	Env []string

	once    sync.Once
	program string
	lookErr error
}

// EventsUnsupported implements Factory: hooks are how events arrive.
func (f *HookFactory) EventsUnsupported() string { return "" }

// ToolsUnsupported implements ToolsUnsupported.
func (f *HookFactory) ToolsUnsupported() string {
	return "tools are called over MCP (--target); a hook command runs the lifecycle fixtures only"
}

func (f *HookFactory) resolve() (string, error) {
	f.once.Do(func() {
		switch f.Protocol {
		case HookClaude, HookNeutral:
			f.program, f.lookErr = resolveProgram(f.Command)
		default:
			f.lookErr = fmt.Errorf("unknown hook protocol %q (use %s or %s)", f.Protocol, HookClaude, HookNeutral)
		}
	})
	return f.program, f.lookErr
}

// Check implements Checker: the command must exist. (Running it would
// change state; a command that exists but fails shows in the cases.)
func (f *HookFactory) Check(context.Context, string) error {
	_, err := f.resolve()
	return err
}

// NewTarget implements Factory.
func (f *HookFactory) NewTarget(_ context.Context, p Project) (Target, error) {
	program, err := f.resolve()
	if err != nil {
		return nil, err
	}
	return &hookTarget{f: f, program: program, p: p}, nil
}

type hookTarget struct {
	f       *HookFactory
	program string
	p       Project
}

func (t *hookTarget) CallTool(context.Context, string, map[string]any) (map[string]any, error) {
	return nil, errors.New("tools cannot be called through a hook command (pass --target for an MCP server)")
}

func (t *hookTarget) Close() error { return nil }

// Event sends the event's payloads one after another; the first one the
// command fails (a non-zero exit) is the event's error.
func (t *hookTarget) Event(ctx context.Context, typ string, params map[string]any) error {
	payloads, err := HookPayloads(t.f.Protocol, t.p, typ, params)
	if err != nil {
		return err
	}
	for _, pl := range payloads {
		if pl.File != "" {
			// What the host's tool call did: the file exists afterwards.
			if err := touch(t.p.Dir, pl.File); err != nil {
				return err
			}
		}
		if err := t.run(ctx, pl); err != nil {
			return err
		}
	}
	return nil
}

func (t *hookTarget) run(ctx context.Context, pl HookPayload) error {
	data, err := json.Marshal(pl.Body)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, t.program, t.f.Command[1:]...)
	cmd.Dir = t.p.Dir
	env := append(os.Environ(), "NEXUS_RUNTIME_ROOT="+t.p.NexusDir, "NEXUS_HARNESS_ID="+t.p.HarnessID)
	if t.f.Protocol == HookClaude {
		env = append(env, "CLAUDE_PROJECT_DIR="+t.p.Dir)
	}
	cmd.Env = append(env, t.f.Env...)
	cmd.Stdin = bytes.NewReader(data)
	stderr := &tailBuffer{limit: 4 << 10}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr // a reply is the host's business, not the state's
	cmd.WaitDelay = time.Second                 // a child holding the pipes must not hang the case
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ctx.Err() == nil:
		// Claude Code treats exit 2 as a blocking error and any other
		// non-zero status as a failure it reports; both are the event
		// failing.
		msg := firstLine(stderr.String())
		if msg == "" {
			msg = fmt.Sprintf("the hook command exited with %s", ee.ProcessState)
		}
		return &ToolError{Message: msg, Form: ErrorHook, Note: fmt.Sprintf("%s: the hook command exited with %s", pl.Name, ee.ProcessState)}
	}
	return fmt.Errorf("hook %s: %w%s", pl.Name, err, stderrSuffix(stderr.String()))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func stderrSuffix(s string) string {
	if s = strings.TrimSpace(s); s != "" {
		return "; stderr: " + s
	}
	return ""
}

// touch creates an empty file at a project-relative path (when missing).
func touch(dir, rel string) error {
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("files_touched entry %q is not a path inside the project", rel)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		return err
	}
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// HookPayload is one hook invocation.
type HookPayload struct {
	Name string         // the host's event name, for messages
	Body map[string]any // the JSON the command reads on stdin
	// File, when set, is a project-relative file the host's tool call
	// wrote before this PostToolUse (created before the hook runs).
	File string
}

// HookPayloads maps one fixture event onto what a host sends its hooks,
// the inverse of nexus's own host adapters (harness/host/claude and
// harness/host/neutral decode exactly these; conformance/nexustarget tests
// the round trip):
//
// Claude Code (HookClaude). A plugin's agent is "<plugin>:<agent>" to Claude
// Code, and a nexus-core harness's plugin is named after its harness id, so
// the agent type is "<harness_id>:<agent_name>" (the event's harness_id, or
// the case's).
//
//	agent_spawn    → SubagentStart {agent_id, agent_type}
//	agent_complete → one PostToolUse per files_touched entry (a Write of
//	                 that file, by absolute path, by the agent), then
//	                 SubagentStop {agent_id, agent_type, last_assistant_message}
//	agent_resume   → SubagentStart {agent_id, agent_type} of a tracked agent
//
// Neutral (HookNeutral): subagent_spawn {agent_id, agent_type: agent_name},
// subagent_complete {agent_id, last_message, files_touched}, subagent_resume
// {agent_id}.
//
// For agent_complete and agent_resume the agent's name (which the host
// knows and the fixture leaves out) is read from the harness's tracker in
// the project. A parameter with no place in the payload is an error, so a
// fixture a later nexus-core adds cannot pass by being half sent.
func HookPayloads(protocol string, p Project, typ string, params map[string]any) ([]HookPayload, error) {
	var ep eventParams
	if err := ep.decode(typ, params); err != nil {
		return nil, err
	}
	harnessID := ep.HarnessID
	if harnessID == "" {
		harnessID = p.HarnessID
	}
	name := ep.AgentName
	if typ != EventAgentSpawn {
		name = trackedName(p, ep.AgentID)
	}
	switch protocol {
	case HookClaude:
		base := func(event string) map[string]any {
			m := map[string]any{"session_id": "nexus-conformance", "transcript_path": "", "cwd": p.Dir,
				"permission_mode": "default", "hook_event_name": event, "agent_id": ep.AgentID}
			switch {
			case strings.Contains(name, ":"): // a tracker that kept the host's type
				m["agent_type"] = name
			case name != "":
				m["agent_type"] = harnessID + ":" + name
			}
			return m
		}
		switch typ {
		case EventAgentSpawn, EventAgentResume:
			return []HookPayload{{Name: "SubagentStart", Body: base("SubagentStart")}}, nil
		case EventAgentComplete:
			var out []HookPayload
			for i, f := range ep.FilesTouched {
				abs := filepath.Join(p.Dir, filepath.FromSlash(f))
				b := base("PostToolUse")
				b["tool_name"] = "Write"
				b["tool_use_id"] = fmt.Sprintf("toolu_conformance_%d", i+1)
				b["tool_input"] = map[string]any{"file_path": abs, "content": ""}
				b["tool_response"] = map[string]any{"type": "create", "filePath": abs, "content": "", "structuredPatch": []any{}}
				out = append(out, HookPayload{Name: "PostToolUse", Body: b, File: filepath.FromSlash(f)})
			}
			b := base("SubagentStop")
			b["stop_hook_active"] = false
			if ep.LastMessage != nil {
				b["last_assistant_message"] = *ep.LastMessage
			}
			return append(out, HookPayload{Name: "SubagentStop", Body: b}), nil
		}
	case HookNeutral:
		b := map[string]any{"session_id": "nexus-conformance", "cwd": p.Dir, "agent_id": ep.AgentID}
		if name != "" {
			b["agent_type"] = name
		}
		switch typ {
		case EventAgentSpawn:
			b["event"] = "subagent_spawn"
		case EventAgentResume:
			b["event"] = "subagent_resume"
		case EventAgentComplete:
			b["event"] = "subagent_complete"
			if ep.LastMessage != nil {
				b["last_message"] = *ep.LastMessage
			}
			if ep.FilesTouched != nil {
				b["files_touched"] = ep.FilesTouched
			}
		}
		return []HookPayload{{Name: b["event"].(string), Body: b}}, nil
	default:
		return nil, fmt.Errorf("unknown hook protocol %q (use %s or %s)", protocol, HookClaude, HookNeutral)
	}
	return nil, fmt.Errorf("unknown lifecycle event %q (known: %s, %s, %s)", typ, EventAgentSpawn, EventAgentComplete, EventAgentResume)
}

// eventParams are the parameters of the 0.10.0 lifecycle events (§6.8).
type eventParams struct {
	HarnessID    string   `json:"harness_id"`
	AgentName    string   `json:"agent_name"`
	AgentID      string   `json:"agent_id"`
	LastMessage  *string  `json:"last_message"`
	FilesTouched []string `json:"files_touched"`
}

func (ep *eventParams) decode(typ string, params map[string]any) error {
	allowed := map[string][]string{
		EventAgentSpawn:    {"harness_id", "agent_name", "agent_id"},
		EventAgentComplete: {"harness_id", "agent_id", "last_message", "files_touched"},
		EventAgentResume:   {"harness_id", "agent_id"},
	}[typ]
	if allowed == nil {
		return fmt.Errorf("unknown lifecycle event %q (known: %s, %s, %s)", typ, EventAgentSpawn, EventAgentComplete, EventAgentResume)
	}
	for k := range params {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("event %s: parameter %q has no place in a hook payload (known: %s)", typ, k, strings.Join(allowed, ", "))
		}
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, ep); err != nil {
		return fmt.Errorf("event %s params: %w", typ, err)
	}
	if ep.AgentID == "" {
		return fmt.Errorf("event %s: params.agent_id is required", typ)
	}
	return nil
}

// trackedName returns the agent_name the harness's tracker records for an
// agent id, or "".
func trackedName(p Project, agentID string) string {
	data, err := readScratch(filepath.Join(p.NexusDir, "state", p.HarnessID, "agent-tracker.json"))
	if err != nil {
		return ""
	}
	var entries []struct {
		AgentID   string `json:"agent_id"`
		AgentName string `json:"agent_name"`
	}
	if json.Unmarshal(data, &entries) != nil {
		return ""
	}
	for _, e := range entries {
		if e.AgentID == agentID {
			return e.AgentName
		}
	}
	return ""
}
