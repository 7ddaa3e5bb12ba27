// Package decisions is the Nauro-compatible decision store as a nexus
// plugin: the MCP tools check_decision, propose_decision, get_decision,
// list_decisions, search_decisions, get_context, get_raw_file,
// diff_since_last_session, flag_question, update_state and list_projects,
// with the reference's names, parameters and result payloads.
//
// Plugin satisfies sdk.Plugin; nexus-plugins serves it with
// plugins/sdk/pluginserver. Its name, settings keys and tool names are
// decisionsapi's, which nexus declares the store with.
package decisions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyjson"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
	"github.com/nexus-harness/nexus/plugins/decisions/store"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// NoProjectGuidance is the text returned when no store can be found.
const NoProjectGuidance = "No decision store found for this project.\n\n" +
	"nexus reads Nauro stores: the project is found through a .nauro/config.json in this directory or above it, " +
	"or through the registry in $NAURO_HOME (default ~/.nauro).\n\n" +
	"To get started, run `nexus decision init` in the repository (or `nauro init <project-name>`), " +
	"then record decisions with propose_decision."

// Plugin is the decision store plugin. It offers tools only: the
// embedded UnimplementedPlugin answers events, which it subscribes to none.
type Plugin struct {
	sdk.UnimplementedPlugin

	// Now is the clock (UTC); tests replace it.
	Now func() time.Time
	// Getenv reads the environment; tests replace it.
	Getenv func(string) string

	mu          sync.Mutex
	projectDir  string
	home        string
	storeDir    string
	frontmatter decision.Frontmatter
	stores      *storePool // open stores, so their caches live across calls
}

var _ sdk.Plugin = (*Plugin)(nil)

// New returns an unconfigured plugin (it works from the process's working
// directory until Configure is called).
func New() *Plugin {
	return &Plugin{Now: time.Now, Getenv: os.Getenv, frontmatter: decision.Documented, stores: newStorePool()}
}

// Info implements sdk.Plugin.
func (p *Plugin) Info(ctx context.Context) (*sdk.Info, error) {
	return &sdk.Info{Name: decisionsapi.Name, Version: decisionsapi.Version, Tools: toolSpecs()}, nil
}

// Configure implements sdk.Plugin.
func (p *Plugin) Configure(ctx context.Context, cfg *sdk.Config) error {
	mode, err := decision.ParseFrontmatter(cfg.Settings[decisionsapi.SettingFrontmatter])
	if err != nil {
		return fmt.Errorf("decisions plugin setting %s: %w", decisionsapi.SettingFrontmatter, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.projectDir = cfg.ProjectDir
	p.frontmatter = mode
	p.home = cfg.Settings[decisionsapi.SettingHome]
	p.storeDir = cfg.Settings[decisionsapi.SettingStore]
	if p.storeDir != "" && !filepath.IsAbs(p.storeDir) && p.projectDir != "" {
		p.storeDir = filepath.Join(p.projectDir, p.storeDir)
	}
	// Load the project's decisions while the host finishes starting, so
	// the first check answers from a warm cache (a call that comes first
	// waits for this load instead of doing its own).
	go func() {
		if pr, err := p.locate(target{}); err == nil {
			_, _ = pr.fs.Corpus()
			pr.release()
		}
	}()
	return nil
}

// target are the store-selection arguments every tool accepts.
type target struct {
	ProjectID *string `json:"project_id"`
	Cwd       *string `json:"cwd"`
}

type project struct {
	fs      *store.FS
	id      string
	name    string
	release func() // the call is done with fs
}

func (p *Plugin) locate(t target) (*project, error) {
	p.mu.Lock()
	home, storeDir, dir := p.home, p.storeDir, p.projectDir
	p.mu.Unlock()
	if home == "" {
		h, err := store.Home(p.Getenv)
		if err != nil {
			return nil, err
		}
		home = h
	}
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if t.Cwd != nil && *t.Cwd != "" {
		dir = *t.Cwd
		storeDir = "" // an explicit cwd asks for that directory's project
	}
	loc := store.Location{Home: home, Cwd: dir, StoreDir: storeDir}
	if t.ProjectID != nil {
		loc.ProjectID = *t.ProjectID
	}
	// Every call resolves the store's path and opens its folder again, so
	// a folder replaced under the path (moved away and copied back,
	// removed and created again) is used from the next call on; the pool
	// keeps the store already open, with its warm cache, while the folder
	// is the same directory.
	r, err := store.Resolve(loc)
	if err != nil {
		return nil, err
	}
	fs, release := p.stores.acquire(r.Store)
	return &project{fs: fs, id: r.ID, name: r.Name, release: release}, nil
}

func (pr *project) identity() *pyjson.Object {
	o := pyjson.NewObject()
	if pr.id == "" {
		o.Set("id", nil)
	} else {
		o.Set("id", pr.id)
	}
	return o.Set("name", pr.name)
}

// dumps is how the reference's server serialises dict results.
func dumps(o *pyjson.Object) string { return pyjson.Dumps(o, pyjson.Options{Indent: 2}) }

func dictResult(o *pyjson.Object) *sdk.ToolResult {
	s := dumps(o)
	return &sdk.ToolResult{Text: s, Structured: json.RawMessage(pyjson.Dumps(o, pyjson.Options{}))}
}

func textResult(text string, structured *pyjson.Object) *sdk.ToolResult {
	r := &sdk.ToolResult{Text: text}
	if structured != nil {
		r.Structured = json.RawMessage(pyjson.Dumps(structured, pyjson.Options{}))
	}
	return r
}

func errorEnvelope(guidance string) *pyjson.Object {
	return pyjson.NewObject().Set("store", "local").Set("status", "error").Set("guidance", guidance)
}

func guidanceFor(err error) string {
	if errors.Is(err, store.ErrNoProject) {
		return NoProjectGuidance
	}
	return err.Error()
}

// dictTools return a JSON object; the others return text.
var dictTools = map[string]bool{decisionsapi.ToolProposeDecision: true, decisionsapi.ToolGetRawFile: true, decisionsapi.ToolDiffSince: true}

// CallTool implements sdk.Plugin.
func (p *Plugin) CallTool(ctx context.Context, name string, args json.RawMessage) (*sdk.ToolResult, error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if name == decisionsapi.ToolListProjects {
		return p.listProjects()
	}
	handler, ok := handlers[name]
	if !ok {
		return &sdk.ToolResult{IsError: true, Text: fmt.Sprintf("Unknown tool: %s", name)}, nil
	}
	var t target
	if err := json.Unmarshal(args, &t); err != nil {
		return toolError(name, fmt.Errorf("arguments are not a JSON object: %w", err)), nil
	}
	pr, err := p.locate(t)
	if err != nil {
		if dictTools[name] {
			return dictResult(errorEnvelope(guidanceFor(err))), nil
		}
		return &sdk.ToolResult{Text: guidanceFor(err)}, nil
	}
	defer pr.release()
	res, err := handler(p, ctx, pr, args)
	if err != nil {
		return toolError(name, err), nil
	}
	return res, nil
}

func toolError(name string, err error) *sdk.ToolResult {
	return &sdk.ToolResult{IsError: true, Text: fmt.Sprintf("Error executing tool %s: %v", name, err)}
}

type handler func(p *Plugin, ctx context.Context, pr *project, args json.RawMessage) (*sdk.ToolResult, error)

var handlers = map[string]handler{
	decisionsapi.ToolCheckDecision:   (*Plugin).checkDecision,
	decisionsapi.ToolProposeDecision: (*Plugin).proposeDecision,
	decisionsapi.ToolGetDecision:     (*Plugin).getDecision,
	decisionsapi.ToolListDecisions:   (*Plugin).listDecisions,
	decisionsapi.ToolSearchDecisions: (*Plugin).searchDecisions,
	decisionsapi.ToolGetContext:      (*Plugin).getContext,
	decisionsapi.ToolGetRawFile:      (*Plugin).getRawFile,
	decisionsapi.ToolDiffSince:       (*Plugin).diffSince,
	decisionsapi.ToolFlagQuestion:    (*Plugin).flagQuestion,
	decisionsapi.ToolUpdateState:     (*Plugin).updateState,
}

func decode(args json.RawMessage, v any) error {
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}

// valueOr is the argument p points at, or def when the caller left it out.
func valueOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func withProject(o *pyjson.Object, pr *project) *pyjson.Object {
	return o.Set("project", pr.identity())
}

func (p *Plugin) checkDecision(ctx context.Context, pr *project, args json.RawMessage) (*sdk.ToolResult, error) {
	var a struct {
		Approach *string `json:"proposed_approach"`
		Context  *string `json:"context"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.Approach == nil {
		return nil, errors.New("proposed_approach is required")
	}
	c, err := kernel.Decisions(pr.fs)
	if err != nil {
		return nil, err
	}
	res, err := kernel.CheckWithProblems(c, *a.Approach, valueOr(a.Context, ""))
	if err != nil {
		return nil, err
	}
	return textResult(kernel.RenderCheck(res), withProject(res.Envelope(), pr)), nil
}

func (p *Plugin) proposeDecision(ctx context.Context, pr *project, args json.RawMessage) (*sdk.ToolResult, error) {
	var a struct {
		Title         *string  `json:"title"`
		Rationale     *string  `json:"rationale"`
		Operation     *string  `json:"operation"`
		Affected      *string  `json:"affected_decision_id"`
		Rejected      any      `json:"rejected"`
		Confidence    *string  `json:"confidence"`
		DecisionType  *string  `json:"decision_type"`
		Reversibility *string  `json:"reversibility"`
		FilesAffected any      `json:"files_affected"`
		Resolves      []string `json:"resolves_questions"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.Title == nil || a.Rationale == nil {
		return nil, errors.New("title and rationale are required")
	}
	rejectedEnv := func(reason string) *sdk.ToolResult {
		return dictResult(withProject(pyjson.NewObject().Set("store", "local").Set("status", "rejected").
			Set("error", (&kernel.ErrorPayload{Kind: "rejected", Reason: reason}).JSON()), pr))
	}
	if n := pytext.Len(*a.Title); n > kernel.MaxTitleLength {
		return rejectedEnv(fmt.Sprintf("Title exceeds maximum length of %d characters (got %d).", kernel.MaxTitleLength, n)), nil
	}
	if n := pytext.Len(*a.Rationale); n > kernel.MaxRationaleLength {
		return rejectedEnv(fmt.Sprintf("Rationale exceeds maximum length of %d characters (got %d).", kernel.MaxRationaleLength, n)), nil
	}
	fields := [][2]string{{"title", *a.Title}, {"rationale", *a.Rationale}}
	if items, ok := a.Rejected.([]any); ok {
		for i, it := range items {
			if m, ok := it.(map[string]any); ok {
				if r, ok := m["reason"].(string); ok {
					fields = append(fields, [2]string{fmt.Sprintf("rejected[%d].reason", i), r})
				}
			}
		}
	}
	for _, f := range fields {
		if msg := kernel.EnvelopeFragment(f[0], f[1]); msg != "" {
			return rejectedEnv(msg), nil
		}
	}
	op := kernel.OpAdd
	if a.Operation != nil && *a.Operation != "" {
		op = *a.Operation
	}
	req := kernel.ProposeRequest{Title: *a.Title, Rationale: *a.Rationale, Operation: op, Rejected: a.Rejected,
		Confidence: a.Confidence, DecisionType: a.DecisionType, Reversibility: a.Reversibility,
		FilesAffected: a.FilesAffected, ResolvesQuestions: a.Resolves}
	src := "mcp"
	req.Source = &src
	if op == kernel.OpUpdate || op == kernel.OpSupersede {
		if a.Affected == nil || *a.Affected == "" {
			return rejectedEnv(fmt.Sprintf("operation=%s requires affected_decision_id", pytext.Repr(op))), nil
		}
		stems, err := pr.fs.ListDecisions()
		if err != nil {
			return nil, err
		}
		stem := ""
		if n, ok := decision.NumberOf(*a.Affected); ok {
			stem, ok = kernel.FindStem(stems, n)
			if !ok {
				stem = ""
			}
		}
		if stem == "" {
			return rejectedEnv(fmt.Sprintf("affected_decision_id=%s not found in store", pytext.Repr(*a.Affected))), nil
		}
		req.AffectedDecisionID = stem
	}
	if a.Confidence == nil && op != kernel.OpUpdate {
		medium := "medium"
		req.Confidence = &medium
	}
	lock, err := pr.fs.DecisionWriteLock(ctx)
	if err != nil {
		return nil, err
	}
	res, err := kernel.Propose(ctx, pr.fs, req, kernel.ProposeOptions{Now: p.Now(), Frontmatter: p.mode()})
	lock.Release()
	if err != nil {
		return nil, err
	}
	if res.Status == "confirmed" {
		// Best effort, as in the reference: the decision is written either way.
		_, _ = pr.fs.Capture(ctx, "decision: "+res.DecisionID, "", p.Now())
	}
	return dictResult(withProject(res.Envelope(), pr)), nil
}

func (p *Plugin) mode() decision.Frontmatter {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frontmatter
}

func (p *Plugin) getDecision(ctx context.Context, pr *project, args json.RawMessage) (*sdk.ToolResult, error) {
	var a struct {
		Number *int    `json:"number"`
		Mode   *string `json:"mode"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.Number == nil {
		return nil, errors.New("number is required")
	}
	text, err := kernel.GetDecision(pr.fs, *a.Number, valueOr(a.Mode, "full"))
	if err != nil {
		return nil, err
	}
	return textResult(text, nil), nil
}

func (p *Plugin) listDecisions(ctx context.Context, pr *project, args json.RawMessage) (*sdk.ToolResult, error) {
	a := struct {
		Limit             *int  `json:"limit"`
		IncludeSuperseded *bool `json:"include_superseded"`
	}{}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	c, err := kernel.Decisions(pr.fs)
	if err != nil {
		return nil, err
	}
	rows := kernel.ListDecisions(c, valueOr(a.Limit, 20), valueOr(a.IncludeSuperseded, false))
	items := make([]any, len(rows))
	for i, r := range rows {
		items[i] = r
	}
	env := withProject(kernel.WithProblems(pyjson.NewObject().Set("store", "local").Set("decisions", items), c.Problems), pr)
	return textResult(kernel.RenderList(rows)+kernel.RenderProblems(c.Problems), env), nil
}

func (p *Plugin) searchDecisions(ctx context.Context, pr *project, args json.RawMessage) (*sdk.ToolResult, error) {
	a := struct {
		Query             *string `json:"query"`
		Limit             *int    `json:"limit"`
		IncludeSuperseded *bool   `json:"include_superseded"`
	}{}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.Query == nil {
		return nil, errors.New("query is required")
	}
	c, err := kernel.Decisions(pr.fs)
	if err != nil {
		return nil, err
	}
	hits, errp, err := kernel.Search(c, *a.Query, valueOr(a.Limit, 10), valueOr(a.IncludeSuperseded, false))
	if err != nil {
		return nil, err
	}
	env := pyjson.NewObject().Set("store", "local")
	if errp != nil {
		env.Set("error", errp.JSON())
	} else {
		rows := make([]any, len(hits))
		for i, h := range hits {
			rows[i] = h.JSON()
		}
		env.Set("results", rows)
		kernel.WithProblems(env, c.Problems)
	}
	text := kernel.RenderSearch(hits, errp)
	if errp == nil {
		text += kernel.RenderProblems(c.Problems)
	}
	return textResult(text, withProject(env, pr)), nil
}

func (p *Plugin) getContext(ctx context.Context, pr *project, args json.RawMessage) (*sdk.ToolResult, error) {
	var a struct {
		Level any `json:"level"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	level := 0
	switch v := a.Level.(type) {
	case nil:
	case string:
		switch v {
		case "L0", "L1", "L2":
			level = int(v[1] - '0')
		default:
			return nil, fmt.Errorf("invalid level %s: use L0, L1 or L2", pytext.Repr(v))
		}
	case float64:
		if v != 0 && v != 1 && v != 2 {
			o := pyjson.NewObject().Set("error", (&kernel.ErrorPayload{Kind: "rejected", Reason: fmt.Sprintf("Invalid level: %s", pyjson.FloatRepr(v))}).JSON())
			if v == float64(int(v)) {
				o = pyjson.NewObject().Set("error", (&kernel.ErrorPayload{Kind: "rejected", Reason: fmt.Sprintf("Invalid level: %d", int(v))}).JSON())
			}
			return dictResult(o), nil
		}
		level = int(v)
	default:
		return nil, errors.New("level must be L0, L1 or L2")
	}
	text, err := kernel.GetContext(pr.fs, level, p.Now())
	if err != nil {
		return nil, err
	}
	return textResult(text, withProject(pyjson.NewObject().Set("store", "local").Set("content", text), pr)), nil
}

func (p *Plugin) getRawFile(ctx context.Context, pr *project, args json.RawMessage) (*sdk.ToolResult, error) {
	var a struct {
		Path *string `json:"path"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.Path == nil {
		return nil, errors.New("path is required")
	}
	content, errp, avail, err := kernel.RawFile(pr.fs, *a.Path, pr.fs.ListMarkdown)
	if err != nil {
		return nil, err
	}
	o := pyjson.NewObject().Set("store", "local")
	if errp != nil {
		o.Set("error", errp.JSON())
		if avail != nil {
			items := make([]any, len(avail))
			for i, f := range avail {
				items[i] = f
			}
			o.Set("available_files", items)
		}
	} else {
		o.Set("content", content)
	}
	return dictResult(withProject(o, pr)), nil
}

func (p *Plugin) flagQuestion(ctx context.Context, pr *project, args json.RawMessage) (*sdk.ToolResult, error) {
	var a struct {
		Question   *string  `json:"question"`
		Context    *string  `json:"context"`
		Targets    []string `json:"targets"`
		ResolvedBy *string  `json:"resolved_by"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	lock, err := pr.fs.RMWLock(ctx, kernel.OpenQuestionsFile)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	switch {
	case a.ResolvedBy != nil && *a.ResolvedBy != "":
		if a.Question != nil && *a.Question != "" {
			return textResult("Pass exactly one of question or resolved_by.", nil), nil
		}
		msg, err := kernel.ResolveQuestions(ctx, pr.fs, *a.ResolvedBy, a.Targets, p.Now())
		if err != nil {
			return nil, err
		}
		if msg == "Question(s) resolved." {
			_, _ = pr.fs.Capture(ctx, fmt.Sprintf("resolved by %s: %s", *a.ResolvedBy, pyList(a.Targets)), "", p.Now())
		}
		return textResult(msg, nil), nil
	case a.Question != nil && *a.Question != "":
		msg, err := kernel.FlagQuestion(ctx, pr.fs, *a.Question, valueOr(a.Context, ""))
		if err != nil {
			return nil, err
		}
		if msg == "Question flagged." || strings.HasSuffix(msg, "The question has still been logged.") {
			_, _ = pr.fs.Capture(ctx, "question: "+*a.Question, "", p.Now())
		}
		return textResult(msg, nil), nil
	}
	return textResult("Pass question to flag a question, or resolved_by and targets to resolve questions.", nil), nil
}

func pyList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = pytext.Repr(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func (p *Plugin) updateState(ctx context.Context, pr *project, args json.RawMessage) (*sdk.ToolResult, error) {
	var a struct {
		Delta *string `json:"delta"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.Delta == nil {
		return nil, errors.New("delta is required")
	}
	lock, err := pr.fs.RMWLock(ctx, kernel.StateCurrentFile)
	if err != nil {
		return nil, err
	}
	msg, err := kernel.UpdateState(ctx, pr.fs, *a.Delta, p.Now())
	lock.Release()
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(msg, "State updated.") {
		_, _ = pr.fs.Capture(ctx, "state: "+*a.Delta, "", p.Now())
	}
	return textResult(msg, nil), nil
}

func (p *Plugin) listProjects() (*sdk.ToolResult, error) {
	p.mu.Lock()
	home := p.home
	p.mu.Unlock()
	if home == "" {
		h, err := store.Home(p.Getenv)
		if err != nil {
			return toolError(decisionsapi.ToolListProjects, err), nil
		}
		home = h
	}
	reg, err := store.LoadRegistry(home)
	if err != nil {
		return toolError(decisionsapi.ToolListProjects, err), nil
	}
	projects := append([]store.Project(nil), reg.Projects...)
	sort.Slice(projects, func(i, j int) bool { return projects[i].Name < projects[j].Name })
	if len(projects) == 0 {
		return textResult("No projects registered.", nil), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Projects (%d):\n", len(projects))
	rows := make([]any, len(projects))
	for i, pr := range projects {
		fmt.Fprintf(&b, "\n  - %s  [%s]  %s", pr.Name, pr.Mode, pr.ID)
		rows[i] = pyjson.NewObject().Set("id", pr.ID).Set("name", pr.Name).Set("mode", pr.Mode).Set("repo_paths", toAny(pr.RepoPaths))
	}
	return textResult(b.String(), pyjson.NewObject().Set("projects", rows)), nil
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
