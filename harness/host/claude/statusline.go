package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/internal/state"
)

// StatusInput is the part of Claude Code's status-line JSON nexus reads.
type StatusInput struct {
	CWD       string `json:"cwd"`
	Workspace struct {
		CurrentDir string `json:"current_dir"`
		ProjectDir string `json:"project_dir"`
	} `json:"workspace"`
}

// maxStatusInput bounds the status-line JSON nexus reads.
const maxStatusInput = 1 << 20

// ReadStatusInput decodes the status-line JSON (an empty input is allowed).
func ReadStatusInput(r io.Reader) (StatusInput, error) {
	var in StatusInput
	b, err := io.ReadAll(io.LimitReader(r, maxStatusInput+1))
	if err != nil {
		return in, err
	}
	if len(b) > maxStatusInput {
		return in, fmt.Errorf("status-line input over %d bytes", maxStatusInput)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return in, nil
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("status-line input is not JSON: %v", err)
	}
	return in, nil
}

// Dir is the folder the status line is about: the project folder Claude
// Code names, else its working directory.
func (in StatusInput) Dir() string {
	for _, d := range []string{in.Workspace.ProjectDir, in.CWD, in.Workspace.CurrentDir} {
		if d != "" {
			return d
		}
	}
	return ""
}

// maxStatusFile bounds each state file the status line reads.
const maxStatusFile = 4 << 20

// StatusLine renders one line about a project's nexus state: the active
// skill, plan issues decided/total, tasks done/total and agents running.
// It reads four small files and validates nothing beyond their JSON: it
// runs after every assistant message.
func StatusLine(l state.Layout) string {
	if st, err := os.Stat(l.Nexus); err != nil || !st.IsDir() {
		return "nexus: not set up here (run /nx-setup)"
	}
	parts := []string{"nexus"}
	var active struct {
		Skill string `json:"skill"`
		Mode  string `json:"mode"`
	}
	if readSmall(l, filepath.Join(l.HarnessDir(), "active-skill.json"), &active) && active.Skill != "" {
		s := active.Skill
		if active.Mode != "" {
			s += ":" + active.Mode
		}
		parts = append(parts, s)
	}
	var plan struct {
		Issues []struct {
			Status string `json:"status"`
		} `json:"issues"`
	}
	if exists, ok := readState(l, l.PlanPath(), &plan); exists {
		if !ok {
			parts = append(parts, "plan unreadable")
		} else {
			decided := 0
			for _, is := range plan.Issues {
				if is.Status == state.IssueDecided {
					decided++
				}
			}
			parts = append(parts, fmt.Sprintf("plan %d/%d decided", decided, len(plan.Issues)))
		}
	}
	var tasks struct {
		Tasks []struct {
			Status string `json:"status"`
		} `json:"tasks"`
	}
	if exists, ok := readState(l, l.TasksPath(), &tasks); exists {
		if !ok {
			parts = append(parts, "tasks unreadable")
		} else {
			done := 0
			for _, t := range tasks.Tasks {
				if t.Status == state.TaskCompleted {
					done++
				}
			}
			parts = append(parts, fmt.Sprintf("tasks %d/%d done", done, len(tasks.Tasks)))
		}
	}
	var agents []struct {
		Status string `json:"status"`
	}
	running := 0
	if readSmall(l, l.TrackerPath(), &agents) {
		for _, a := range agents {
			if a.Status == state.AgentRunning {
				running++
			}
		}
	}
	if running == 1 {
		parts = append(parts, "1 agent running")
	} else if running > 1 {
		parts = append(parts, fmt.Sprintf("%d agents running", running))
	}
	return strings.Join(parts, " · ")
}

// WithConfigProblems adds to a status line that the configuration has
// problems (nexus goes on without what they leave out).
func WithConfigProblems(line string, n int) string {
	switch {
	case n == 1:
		return line + " · config: 1 problem (nexus doctor)"
	case n > 1:
		return line + fmt.Sprintf(" · config: %d problems (nexus doctor)", n)
	}
	return line
}

// readState reads a state file: exists reports whether it is there, ok
// whether it decoded.
// The file is read beneath the layout's anchor, only when it is a regular
// file, through maxStatusFile (see internal/state, read.go).
func readState(l state.Layout, path string, v any) (exists, ok bool) {
	b, err := l.ReadFile(path, maxStatusFile)
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist), false
	}
	return true, json.Unmarshal(b, v) == nil
}

func readSmall(l state.Layout, path string, v any) bool {
	exists, ok := readState(l, path, v)
	return exists && ok
}
