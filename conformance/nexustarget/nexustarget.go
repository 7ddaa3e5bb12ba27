// Package nexustarget runs the conformance suite against nexus itself,
// in-process: one harness per case, assembled as nexus's commands assemble
// theirs (harness.Assemble) and rooted in the case's scratch project, with
// the tools called by abstract name and lifecycle events fired through
// nexus's lifecycle handlers.
//
// It is a separate package so that package conformance stays importable by
// other harnesses without pulling in nexus's engine.
package nexustarget

import (
	"context"
	"errors"
	"fmt"

	"github.com/nexus-harness/nexus/conformance"
	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

// Lifecycle fires an agent lifecycle event (agent_spawn, agent_complete,
// agent_resume) with the fixture's params against an engine, in the
// engine's harness namespace. A contract failure is a *tools.Error.
type Lifecycle interface {
	Fire(ctx context.Context, e *harness.Engine, event string, params map[string]any) error
}

// Factory makes one engine per case. The distribution and the schema set
// are shared between engines (both are safe for concurrent use).
type Factory struct {
	Core    *vocabulary.Core
	Schemas *schema.Set
	// Lifecycle handles events; nil means events are not supported.
	Lifecycle Lifecycle
}

// New loads the distribution at coreDir and returns a factory wired to
// nexus's lifecycle handlers.
func New(coreDir string, schemas *schema.Set) (*Factory, error) {
	return NewDist(vocabulary.DirDist(coreDir, ""), schemas)
}

// NewDist is New for any distribution (a directory or the built-in copy).
func NewDist(d vocabulary.Dist, schemas *schema.Set) (*Factory, error) {
	core, err := vocabulary.LoadManifestDist(d)
	if err != nil {
		return nil, err
	}
	if schemas == nil {
		schemas = schema.NewCoreSetFS(d.FS)
	}
	return &Factory{Core: core, Schemas: schemas, Lifecycle: defaultLifecycle}, nil
}

// EventsUnsupported implements conformance.Factory.
func (f *Factory) EventsUnsupported() string {
	if f.Lifecycle == nil {
		return "no lifecycle handlers are wired into the in-process target"
	}
	return ""
}

// NewTarget implements conformance.Factory.
func (f *Factory) NewTarget(_ context.Context, p conformance.Project) (conformance.Target, error) {
	// No plugins, no memory tools and the built-in configuration: the
	// fixtures speak to the nexus-core tools and the tracker alone.
	h, err := harness.Assemble(harness.Setup{Engine: harness.Options{
		Project:   p.Dir,
		NexusDir:  p.NexusDir,
		HarnessID: p.HarnessID,
		Core:      f.Core,
		Schemas:   f.Schemas,
	}})
	if err != nil {
		return nil, err
	}
	return &target{e: h.Engine, lc: f.Lifecycle}, nil
}

type target struct {
	e  *harness.Engine
	lc Lifecycle
}

func (t *target) CallTool(ctx context.Context, tool string, params map[string]any) (map[string]any, error) {
	res, err := t.e.CallTool(ctx, tool, params)
	return res, toolError(err)
}

func (t *target) Event(ctx context.Context, typ string, params map[string]any) error {
	if t.lc == nil {
		return fmt.Errorf("event %s: no lifecycle handlers", typ)
	}
	return toolError(t.lc.Fire(ctx, t.e, typ, params))
}

func (t *target) Close() error { return nil }

// toolError turns nexus's domain errors into the runner's.
func toolError(err error) error {
	var te *tools.Error
	if errors.As(err, &te) {
		return &conformance.ToolError{Message: te.Message}
	}
	return err
}
