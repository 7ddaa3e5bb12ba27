package conformance

import (
	"context"
	"errors"
)

// Combined is one harness reached two ways: tools over one factory's
// targets (an MCP server) and lifecycle events over another's (its hook
// command). Each side is started only when a case first needs it, so a
// lifecycle case never starts the MCP server.
type Combined struct {
	Tools, Events Factory
}

// EventsUnsupported implements Factory.
func (c *Combined) EventsUnsupported() string { return c.Events.EventsUnsupported() }

// Check implements Checker: both sides must start.
func (c *Combined) Check(ctx context.Context, scratch string) error {
	var errs []error
	for _, f := range []Factory{c.Tools, c.Events} {
		if ch, ok := f.(Checker); ok {
			errs = append(errs, ch.Check(ctx, scratch))
		}
	}
	return errors.Join(errs...)
}

// NewTarget implements Factory.
func (c *Combined) NewTarget(_ context.Context, p Project) (Target, error) {
	return &combined{c: c, p: p}, nil
}

type combined struct {
	c             *Combined
	p             Project
	tools, events Target
}

func (t *combined) side(ctx context.Context, f Factory, have *Target) (Target, error) {
	if *have == nil {
		tg, err := f.NewTarget(ctx, t.p)
		if err != nil {
			return nil, err
		}
		*have = tg
	}
	return *have, nil
}

func (t *combined) CallTool(ctx context.Context, tool string, params map[string]any) (map[string]any, error) {
	tg, err := t.side(ctx, t.c.Tools, &t.tools)
	if err != nil {
		return nil, err
	}
	return tg.CallTool(ctx, tool, params)
}

func (t *combined) Event(ctx context.Context, typ string, params map[string]any) error {
	tg, err := t.side(ctx, t.c.Events, &t.events)
	if err != nil {
		return err
	}
	return tg.Event(ctx, typ, params)
}

func (t *combined) Close() error {
	var errs []error
	for _, tg := range []Target{t.tools, t.events} {
		if tg != nil {
			errs = append(errs, tg.Close())
		}
	}
	return errors.Join(errs...)
}
