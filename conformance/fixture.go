// Package conformance runs nexus-core conformance fixtures against a
// harness: nexus in-process (package conformance/nexustarget) or any
// harness that serves the nexus-core tools over MCP stdio (MCPFactory).
//
// The fixture grammar and assertion language follow the contract digest
// §6; the assertion language itself lives in conformance/assertion.
package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/nexus-harness/nexus/conformance/assertion"
	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/nexus-harness/nexus/schema"
)

// DefaultHarnessID is the harness id the upstream suite was written for:
// the lifecycle fixtures' preconditions sit in the claude-nexus namespace
// (digest §6.6).
const DefaultHarnessID = "claude-nexus"

// Event types the fixture grammar knows.
const (
	EventAgentSpawn    = "agent_spawn"
	EventAgentComplete = "agent_complete"
	EventAgentResume   = "agent_resume"
)

// Fixture is one parsed fixture. Exactly one of Action, Event and Steps is
// set.
type Fixture struct {
	TestID       string
	Description  string
	Precondition []FileSpec
	Action       *Action
	Event        *Event
	Steps        []Step
	Post         *Postcondition
}

// Action is a tool call by abstract name. Params stay raw so every call
// gets a fresh, plainly decoded copy (float64 numbers, as an MCP server
// would see them).
type Action struct {
	Tool   string
	Params json.RawMessage
}

// Event is a lifecycle event.
type Event struct {
	Type   string
	Params json.RawMessage
}

// Step is one step of a multi-step fixture.
type Step struct {
	Description  string
	Action       *Action
	Event        *Event
	AssertReturn assertion.Block
	AssertState  []FileSpec
}

// Postcondition holds the assertions checked after the action, event or
// last step.
type Postcondition struct {
	StateFiles    []FileSpec
	ReturnValue   assertion.Block
	Error         bool
	ErrorContains *string
}

// ExpectsError reports whether the call must fail: "error": true,
// "error_contains", or a "$.error" assertion (digest §6.7).
func (p *Postcondition) ExpectsError() bool {
	return p != nil && (p.Error || p.ErrorContains != nil || p.ReturnValue.ExpectsError())
}

// FileKind says what a state_files entry asks for.
type FileKind int

const (
	// FileAbsent is null: the file must not exist (precondition: delete it).
	FileAbsent FileKind = iota
	// FileExists is {}: the file exists, content not inspected
	// (precondition: create it when missing).
	FileExists
	// FileContent is any other value: in a precondition the JSON written to
	// the file, in an assertion a block of JSONPath assertions.
	FileContent
)

// FileSpec is one entry of a state_files / assert_state map. Key is the
// path as written (placeholders unexpanded).
type FileSpec struct {
	Key     string
	Kind    FileKind
	Content json.RawMessage // precondition content
	Block   assertion.Block // assertions
}

// Case is one fixture loaded from a file. Err is set when the fixture could
// not be read or is invalid: the case then fails without running.
type Case struct {
	ID      string
	Source  string // file label, e.g. tools/plan-start.json
	Index   int    // position in the file (0 for single-object files)
	Fixture *Fixture
	Err     error
	// Notes record tolerated upstream deviations found while loading.
	Notes []string
}

// UsesEvents reports whether the fixture fires lifecycle events.
func (f *Fixture) UsesEvents() bool {
	return f.Event != nil || slices.ContainsFunc(f.Steps, func(s Step) bool { return s.Event != nil })
}

// UsesActions reports whether the fixture calls a tool (in its action or a
// step).
func (f *Fixture) UsesActions() bool {
	return f.Action != nil || slices.ContainsFunc(f.Steps, func(s Step) bool { return s.Action != nil })
}

// HarnessID returns the harness id the fixture names in an event's
// params.harness_id, or "".
func (f *Fixture) HarnessID() string {
	events := []*Event{f.Event}
	for _, s := range f.Steps {
		events = append(events, s.Event)
	}
	for _, e := range events {
		if e == nil || len(e.Params) == 0 {
			continue
		}
		var p struct {
			HarnessID any `json:"harness_id"`
		}
		if json.Unmarshal(e.Params, &p) == nil {
			if s, ok := p.HarnessID.(string); ok && s != "" {
				return s
			}
		}
	}
	return ""
}

// Source is a directory of fixture files and the label its files get in
// reports.
type Source struct {
	// FS holds the directory; Dir is its slash-separated path inside FS.
	FS  fs.FS
	Dir string
	// Where names the directory in messages (a path on disk, or a file of
	// the built-in distribution).
	Where string
	Label string
	// Optional sources may be missing (early copies of nexus-core 0.10.0
	// had no scenarios/); a missing source is noted, not an error.
	Optional bool
}

// CoreSources returns the fixture directories of a nexus-core distribution
// whose files are fsys (vocabulary.Dist.FS): conformance/tools,
// conformance/lifecycle and conformance/scenarios. where names a
// distribution-relative path for messages (vocabulary.Dist.File).
func CoreSources(fsys fs.FS, where func(rel string) string) []Source {
	var out []Source
	for _, d := range []string{"tools", "lifecycle", "scenarios"} {
		rel := "conformance/" + d
		out = append(out, Source{
			FS:       fsys,
			Dir:      rel,
			Where:    where(rel),
			Label:    d,
			Optional: d == "scenarios",
		})
	}
	return out
}

// DirSources returns the sources of an extra fixture directory: its own
// *.json files and those of its tools/, lifecycle/ and scenarios/
// subdirectories, when present.
func DirSources(dir string) []Source {
	fsys := safefile.DirFS(dir, safefile.FSLimits{File: maxFixtureFile, Entries: maxFixtureEntries, Depth: 4})
	out := []Source{{FS: fsys, Dir: ".", Where: dir, Label: dir}}
	for _, d := range []string{"tools", "lifecycle", "scenarios"} {
		sub := filepath.Join(dir, d)
		if st, err := os.Stat(sub); err == nil && st.IsDir() {
			out = append(out, Source{FS: fsys, Dir: d, Where: sub, Label: sub})
		}
	}
	return out
}

// Validator checks a JSON-shaped value against a schema location of
// package schema. *schema.Set implements it.
type Validator interface {
	Validate(loc string, v any) ([]schema.Problem, error)
}

// Suite is a loaded set of cases in a deterministic order: sources in the
// order given, files by name, fixtures in file order.
type Suite struct {
	Cases []*Case
	// Notes are suite-level remarks (a missing optional directory).
	Notes []string
}

// Load reads every *.json file of the sources (not recursive). Each file
// holds one fixture object or an array of them. Every fixture is checked
// against fixture.schema.json (tolerating digest C8) and compiled; a bad
// fixture becomes a failing case, a repeated test_id too. Load fails only
// when a source cannot be read or nothing was found.
func Load(v Validator, sources ...Source) (*Suite, error) {
	s := &Suite{}
	seen := map[string]string{}
	for _, src := range sources {
		entries, err := fs.ReadDir(src.FS, src.Dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && src.Optional {
				s.Notes = append(s.Notes, fmt.Sprintf("no %s/ fixtures: %s does not exist (early copies of nexus-core 0.10.0 omit them)", src.Label, src.Where))
				continue
			}
			return nil, fmt.Errorf("read fixtures: %w", err)
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, name := range names {
			label := filepath.ToSlash(filepath.Join(src.Label, name))
			for _, c := range loadFile(v, src, name, label) {
				if c.Err == nil {
					if prev, dup := seen[c.ID]; dup {
						c.Err = fmt.Errorf("test_id %q is already used by a fixture in %s; test ids must be unique", c.ID, prev)
					} else {
						seen[c.ID] = label
					}
				}
				s.Cases = append(s.Cases, c)
			}
		}
	}
	if len(s.Cases) == 0 {
		return nil, fmt.Errorf("no fixtures found in %s", describeSources(sources))
	}
	return s, nil
}

func describeSources(sources []Source) string {
	dirs := make([]string, len(sources))
	for i, s := range sources {
		dirs[i] = s.Where
	}
	return strings.Join(dirs, ", ")
}

// loadFile returns the cases of one file. A file that is not JSON, or not
// an object or array of objects, yields one failing case named after it.
func loadFile(v Validator, src Source, name, label string) []*Case {
	fileCase := func(err error) []*Case {
		return []*Case{{ID: strings.TrimSuffix(name, ".json"), Source: label, Err: err}}
	}
	b, err := fs.ReadFile(src.FS, path.Join(src.Dir, name))
	if err != nil {
		return fileCase(fmt.Errorf("read %s: %w", label, err))
	}
	b = bytes.TrimSpace(b)
	var raws []json.RawMessage
	switch {
	case len(b) > 0 && b[0] == '[':
		if err := json.Unmarshal(b, &raws); err != nil {
			return fileCase(fmt.Errorf("%s is not a JSON array of fixtures: %v", label, err))
		}
	case len(b) > 0 && b[0] == '{':
		if !json.Valid(b) {
			return fileCase(fmt.Errorf("%s is not valid JSON", label))
		}
		raws = []json.RawMessage{b}
	default:
		return fileCase(fmt.Errorf("%s holds neither a fixture object nor an array of fixtures", label))
	}
	cases := make([]*Case, 0, len(raws))
	for i, raw := range raws {
		c := &Case{Source: label, Index: i}
		c.ID = peekID(raw, label, i)
		c.Fixture, c.Notes, c.Err = ParseFixture(v, raw)
		cases = append(cases, c)
	}
	return cases
}

// peekID finds a usable case id even for a fixture that fails to parse.
func peekID(raw json.RawMessage, label string, i int) string {
	var head struct {
		TestID any `json:"test_id"`
	}
	if json.Unmarshal(raw, &head) == nil {
		if s, ok := head.TestID.(string); ok && s != "" {
			return s
		}
	}
	return fmt.Sprintf("%s#%d", label, i)
}

// ParseFixture validates one fixture against fixture.schema.json (when v is
// not nil) and compiles it. Notes list tolerated upstream deviations.
func ParseFixture(v Validator, raw json.RawMessage) (*Fixture, []string, error) {
	var notes []string
	if v != nil {
		var err error
		if notes, err = validateFixture(v, raw); err != nil {
			return nil, notes, err
		}
	}
	f, err := compileFixture(raw)
	return f, notes, err
}

// validateFixture checks raw against fixture.schema.json. Digest C8: the
// lifecycle fixtures give agent-tracker.json preconditions as arrays while
// the schema allows only objects or null there; such values are checked as
// if they were objects and reported as notes.
func validateFixture(v Validator, raw json.RawMessage) ([]string, error) {
	doc, err := decodeNumbers(raw)
	if err != nil {
		return nil, fmt.Errorf("fixture is not JSON: %w", err)
	}
	var notes []string
	if top, ok := doc.(map[string]any); ok {
		if pre, ok := top["precondition"].(map[string]any); ok {
			if files, ok := pre["state_files"].(map[string]any); ok {
				keys := slices.Sorted(maps.Keys(files))
				for _, k := range keys {
					if _, isArr := files[k].([]any); isArr {
						files[k] = map[string]any{}
						notes = append(notes, fmt.Sprintf("upstream deviation C8 tolerated: precondition %s is a JSON array; fixture.schema.json allows only an object or null there", k))
					}
				}
			}
		}
	}
	problems, err := v.Validate(schema.Fixture, doc)
	if err != nil {
		return notes, fmt.Errorf("fixture schema: %w", err)
	}
	if len(problems) > 0 {
		return notes, fmt.Errorf("fixture does not match conformance/schema/fixture.schema.json: %s", schema.Join(problems))
	}
	return notes, nil
}

// rawFixture is the JSON shape; unknown keys are the schema's business, but
// decoding is strict about types.
type rawFixture struct {
	TestID       string          `json:"test_id"`
	Description  string          `json:"description"`
	Covers       json.RawMessage `json:"covers"`
	Uncovered    []string        `json:"uncovered_params"`
	Precondition *struct {
		StateFiles json.RawMessage `json:"state_files"`
	} `json:"precondition"`
	Action        *rawAction `json:"action"`
	Event         *rawEvent  `json:"event"`
	Steps         []rawStep  `json:"steps"`
	Postcondition *rawPost   `json:"postcondition"`
}

type rawAction struct {
	Tool   string          `json:"tool"`
	Params json.RawMessage `json:"params"`
}

type rawEvent struct {
	Type        string          `json:"type"`
	Params      json.RawMessage `json:"params"`
	Description string          `json:"description"`
}

type rawStep struct {
	Description  string          `json:"description"`
	Action       *rawAction      `json:"action"`
	Event        *rawEvent       `json:"event"`
	AssertReturn json.RawMessage `json:"assert_return"`
	AssertState  json.RawMessage `json:"assert_state"`
}

type rawPost struct {
	StateFiles    json.RawMessage `json:"state_files"`
	ReturnValue   json.RawMessage `json:"return_value"`
	Error         *bool           `json:"error"`
	ErrorContains *string         `json:"error_contains"`
}

// compileFixture turns a fixture into its runnable form. It re-checks what
// the runner depends on, so a fixture loaded without schema validation
// cannot slip through half-understood.
func compileFixture(raw json.RawMessage) (*Fixture, error) {
	var r rawFixture
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("fixture: %w", err)
	}
	if r.TestID == "" {
		return nil, fmt.Errorf("fixture has no test_id")
	}
	f := &Fixture{TestID: r.TestID, Description: r.Description}
	n := 0
	if r.Action != nil {
		n++
	}
	if r.Event != nil {
		n++
	}
	if r.Steps != nil {
		n++
	}
	if n != 1 {
		return nil, fmt.Errorf("fixture %s must have exactly one of action, event and steps", r.TestID)
	}
	var err error
	if r.Precondition != nil && len(r.Precondition.StateFiles) > 0 {
		if f.Precondition, err = compileFiles(r.Precondition.StateFiles, true); err != nil {
			return nil, fmt.Errorf("precondition.state_files: %w", err)
		}
	}
	if f.Action, err = compileAction(r.Action); err != nil {
		return nil, err
	}
	if f.Event, err = compileEvent(r.Event); err != nil {
		return nil, err
	}
	if r.Steps != nil && len(r.Steps) == 0 {
		return nil, fmt.Errorf("steps is empty")
	}
	for i, rs := range r.Steps {
		s, err := compileStep(rs)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
		f.Steps = append(f.Steps, s)
	}
	if r.Postcondition != nil {
		if f.Post, err = compilePost(r.Postcondition); err != nil {
			return nil, fmt.Errorf("postcondition: %w", err)
		}
	}
	return f, nil
}

func compileAction(r *rawAction) (*Action, error) {
	if r == nil {
		return nil, nil
	}
	if r.Tool == "" {
		return nil, fmt.Errorf("action has no tool")
	}
	params := r.Params
	if len(params) == 0 || string(params) == "null" {
		return nil, fmt.Errorf("action %s has no params object", r.Tool)
	}
	if !isObject(params) {
		return nil, fmt.Errorf("action %s: params must be an object", r.Tool)
	}
	return &Action{Tool: r.Tool, Params: params}, nil
}

func compileEvent(r *rawEvent) (*Event, error) {
	if r == nil {
		return nil, nil
	}
	switch r.Type {
	case EventAgentSpawn, EventAgentComplete, EventAgentResume:
	default:
		return nil, fmt.Errorf("unknown event type %q (known: agent_spawn, agent_complete, agent_resume)", r.Type)
	}
	params := r.Params
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{}`)
	}
	if !isObject(params) {
		return nil, fmt.Errorf("event %s: params must be an object", r.Type)
	}
	return &Event{Type: r.Type, Params: params}, nil
}

func compileStep(r rawStep) (Step, error) {
	s := Step{Description: r.Description}
	var err error
	if (r.Action == nil) == (r.Event == nil) {
		return s, fmt.Errorf("a step must have exactly one of action and event")
	}
	if s.Action, err = compileAction(r.Action); err != nil {
		return s, err
	}
	if s.Event, err = compileEvent(r.Event); err != nil {
		return s, err
	}
	if len(r.AssertReturn) > 0 {
		if s.AssertReturn, err = assertion.CompileBlock(r.AssertReturn); err != nil {
			return s, fmt.Errorf("assert_return: %w", err)
		}
	}
	if len(r.AssertState) > 0 {
		if s.AssertState, err = compileFiles(r.AssertState, false); err != nil {
			return s, fmt.Errorf("assert_state: %w", err)
		}
	}
	return s, nil
}

func compilePost(r *rawPost) (*Postcondition, error) {
	p := &Postcondition{ErrorContains: r.ErrorContains}
	if r.Error != nil {
		p.Error = *r.Error
	}
	var err error
	if len(r.ReturnValue) > 0 {
		if p.ReturnValue, err = assertion.CompileBlock(r.ReturnValue); err != nil {
			return nil, fmt.Errorf("return_value: %w", err)
		}
	}
	if len(r.StateFiles) > 0 {
		if p.StateFiles, err = compileFiles(r.StateFiles, false); err != nil {
			return nil, fmt.Errorf("state_files: %w", err)
		}
	}
	return p, nil
}

// compileFiles reads a state_files map in document order. Preconditions
// keep content as JSON to write; assertions compile their blocks.
// Placeholders are checked here (with a stand-in id) so an unknown token
// fails at load time; they are expanded for real when the case runs.
func compileFiles(raw json.RawMessage, precondition bool) ([]FileSpec, error) {
	members, err := assertion.Members(raw)
	if err != nil {
		return nil, err
	}
	out := make([]FileSpec, 0, len(members))
	for _, m := range members {
		if _, err := expandPath(m.Key, "harness-id"); err != nil {
			return nil, err
		}
		spec := FileSpec{Key: m.Key}
		v := bytes.TrimSpace(m.Value)
		switch {
		case string(v) == "null":
			spec.Kind = FileAbsent
		case isEmptyObject(v):
			spec.Kind = FileExists
		case precondition:
			spec.Kind, spec.Content = FileContent, v
		case isObject(v):
			spec.Kind = FileContent
			if spec.Block, err = assertion.CompileBlock(v); err != nil {
				return nil, fmt.Errorf("%s: %w", m.Key, err)
			}
		default:
			return nil, fmt.Errorf("%s: expected null, {} or an object of assertions, got %s", m.Key, v)
		}
		out = append(out, spec)
	}
	return out, nil
}

// expandPath expands placeholders and insists the result stays inside the
// project: fixtures are input, not trusted paths.
func expandPath(key, harnessID string) (string, error) {
	p, err := assertion.Expand(key, harnessID)
	if err != nil {
		return "", err
	}
	if !filepath.IsLocal(filepath.FromSlash(p)) {
		return "", &assertion.FixtureError{Msg: fmt.Sprintf("path %q must be relative to the project root and stay inside it", key)}
	}
	return filepath.FromSlash(p), nil
}

func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

func isEmptyObject(b []byte) bool {
	if !isObject(b) {
		return false
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && len(m) == 0
}

// decodeNumbers decodes JSON keeping numbers as json.Number (what the
// schema validator and the matchers compare exactly).
func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}
