// Package nexustarget runs the conformance suite against nexus itself,
// in-process: one harness per case, built as nexus's commands build theirs
// (harness/compose) and rooted in the case's scratch project, with the
// tools called by abstract name and lifecycle events fired through the
// harness's lifecycle engine.
//
// It is a separate package so that package conformance stays importable by
// other harnesses without pulling in nexus's engine.
package nexustarget

import (
	"context"
	"errors"

	"github.com/nexus-harness/nexus/conformance"
	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/harness/lifecycle"
	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

// Factory makes one harness per case. The distribution and the schema set
// are shared between harnesses (both are safe for concurrent use).
type Factory struct {
	Core    *vocabulary.Core
	Schemas *schema.Set
}

// New loads the distribution at coreDir and returns a factory.
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
	return &Factory{Core: core, Schemas: schemas}, nil
}

// EventsUnsupported implements conformance.Factory: every lifecycle
// fixture event is supported.
func (f *Factory) EventsUnsupported() string { return "" }

// NewTarget implements conformance.Factory.
func (f *Factory) NewTarget(ctx context.Context, p conformance.Project) (conformance.Target, error) {
	// No plugins, no memory tools and the built-in configuration (with the
	// scratch project's file, which has none): the fixtures speak to the nexus-core tools and
	// the tracker alone.
	root := compose.New(compose.Options{Project: p.Dir, BuiltinConfig: true})
	h, err := root.Harness(ctx, compose.HarnessOptions{
		Core:      f.Core,
		Schemas:   f.Schemas,
		NexusDir:  p.NexusDir,
		HarnessID: p.HarnessID,
	})
	if err != nil {
		return nil, err
	}
	return &target{h: h}, nil
}

type target struct{ h *compose.Harness }

func (t *target) CallTool(ctx context.Context, tool string, params map[string]any) (map[string]any, error) {
	res, err := t.h.Engine.CallTool(ctx, tool, params)
	return res, toolError(err)
}

// Event fires a fixture's lifecycle event. An event for an agent the
// tracker does not know is a contract failure a fixture may expect;
// anything else (bad params, an unreadable tracker) fails the case.
func (t *target) Event(ctx context.Context, typ string, params map[string]any) error {
	err := t.h.Lifecycle.FixtureEvent(ctx, typ, params)
	if errors.Is(err, lifecycle.ErrNotTracked) {
		return &conformance.ToolError{Message: err.Error()}
	}
	return toolError(err)
}

func (t *target) Close() error {
	t.h.Close()
	return nil
}

// toolError turns nexus's domain errors into the runner's.
func toolError(err error) error {
	var te *tools.Error
	if errors.As(err, &te) {
		return &conformance.ToolError{Message: te.Message}
	}
	return err
}
