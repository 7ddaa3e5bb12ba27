package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/conformance/assertion"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func sampleResults() []*Result {
	return []*Result{
		{ID: "plan_start_happy_path", Source: "tools/plan-start.json", Status: Pass, Duration: 3 * time.Millisecond},
		{ID: "task_add_happy_path", Source: "tools/task-add.json", Status: Pass, Duration: 2 * time.Millisecond,
			Notes: []string{"upstream deviation C7 tolerated: tasks.json goal is \"\""}},
		{ID: "plan_decide_happy_path", Source: "tools/plan-decide.json", Status: Fail, Duration: 4 * time.Millisecond, Failures: []Failure{
			{Where: "return", Path: "$.allComplete", Expected: "false", Actual: "true"},
			{Where: ".nexus/state/plan.json", Path: "$.issues[0].decision", Expected: `{"type":"string","minLength":1}`, Actual: assertion.Absent, Reason: "no value at this path"},
			{Where: "schema .nexus/state/plan.json", Message: "/issues/0/status: value must be one of 'pending', 'decided'"},
		}},
		{ID: "scenario_x", Source: "scenarios/x.json", Status: Fail, Failures: []Failure{
			{Step: 3, StepDescription: "close", Where: "error", Expected: "success", Actual: `error "tasks.json not found"`},
		}},
		{ID: "agent_spawn", Source: "lifecycle/agent-spawn.json", Status: Skip, SkipReason: "lifecycle events are harness hooks, not MCP tools"},
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	results := sampleResults()
	for _, r := range results {
		WriteText(&b, r)
	}
	b.WriteString(Summarise(results).String() + "\n")
	golden(t, "report.txt", b.Bytes())
}

func TestWriteJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, sampleResults(), 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.xml", b.Bytes())
}

func TestReportJSON(t *testing.T) {
	results := sampleResults()
	for _, r := range results {
		r.DurationMS = float64(r.Duration.Microseconds()) / 1000
	}
	b, err := json.MarshalIndent(NewReport("nexus (in-process)", "claude-nexus", "/core", []string{"a note"}, results, 12*time.Millisecond), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json", append(b, '\n'))
}

func TestSummary(t *testing.T) {
	if got := (Summary{Passed: 44}).String(); got != "44 passed, 0 failed" {
		t.Errorf("got %q", got)
	}
	if got := Summarise(sampleResults()).String(); got != "2 passed, 2 failed, 1 skipped" {
		t.Errorf("got %q", got)
	}
}

func sampleRuns() []*Run {
	b := []*Result{
		{ID: "plan_start_happy_path", Source: "tools/plan-start.json", Status: Pass, Duration: 5 * time.Millisecond},
		{ID: "task_add_happy_path", Source: "tools/task-add.json", Status: Fail, Duration: 5 * time.Millisecond,
			Failures: []Failure{{Where: "error", Expected: `a message containing "Unknown action"`, Actual: `"MCP error -32602: Input validation error: Invalid arguments for tool nx_plan_update: a very long message that goes on and on"`}}},
		{ID: "plan_decide_happy_path", Source: "tools/plan-decide.json", Status: Pass, Duration: 5 * time.Millisecond},
		{ID: "scenario_x", Source: "scenarios/x.json", Status: Pass},
		{ID: "agent_spawn", Source: "lifecycle/agent-spawn.json", Status: Fail, Failures: []Failure{{Where: "schema .nexus/state/claude-nexus/agent-tracker.json", Message: "/0/agent_name: 'claude-nexus:architect' does not match pattern '^[a-z][a-z0-9-]*$'"}}},
	}
	return []*Run{
		{Label: "A", Target: "nexus mcp", HookTarget: "nexus hook --host claude (claude)", Results: sampleResults(), Elapsed: 1500 * time.Millisecond},
		{Label: "B", Target: "node peer/mcp-server.cjs", HookTarget: "node peer/gate.cjs (claude)", Results: b, Elapsed: 3600 * time.Millisecond},
		{Label: "C", Target: "missing-harness", StartErr: errors.New(`target command "missing-harness" not found`)},
	}
}

func TestWriteComparison(t *testing.T) {
	var b bytes.Buffer
	WriteComparison(&b, sampleRuns())
	golden(t, "compare.txt", b.Bytes())
}

func TestWriteJUnitRuns(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnitRuns(&b, sampleRuns()); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.xml", b.Bytes())
}

// TestUpstreamNotesBrief (issue 26): without -v the notes about
// nexus-core's own known deviations are left out of the per-case lines
// and counted instead; every other note stays.
func TestUpstreamNotesBrief(t *testing.T) {
	results := sampleResults()
	results[0].Notes = append(results[0].Notes, "no lifecycle/ fixtures here", "upstream deviation C8 tolerated: x")
	var brief, full bytes.Buffer
	for _, r := range results {
		WriteResult(&brief, r, false)
		WriteResult(&full, r, true)
	}
	if strings.Contains(brief.String(), "upstream deviation") || !strings.Contains(brief.String(), "no lifecycle/ fixtures here") {
		t.Errorf("brief:\n%s", brief.String())
	}
	if strings.Count(full.String(), "upstream deviation") != 2 {
		t.Errorf("verbose:\n%s", full.String())
	}
	if n, ids := UpstreamNotes(results); n != 2 || strings.Join(ids, ",") != "C7,C8" {
		t.Errorf("UpstreamNotes = %d %v", n, ids)
	}
}
