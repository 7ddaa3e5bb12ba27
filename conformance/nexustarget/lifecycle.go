package nexustarget

import (
	"context"
	"errors"

	"github.com/nexus-harness/nexus/conformance"
	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// LifecycleFunc adapts a function to Lifecycle.
type LifecycleFunc func(ctx context.Context, e *harness.Engine, event string, params map[string]any) error

// Fire implements Lifecycle.
func (f LifecycleFunc) Fire(ctx context.Context, e *harness.Engine, event string, params map[string]any) error {
	return f(ctx, e, event, params)
}

// defaultLifecycle runs the fixture events through nexus's tracker
// handlers, the same functions the host hooks reach. An event for an agent
// the tracker does not know is a contract failure a fixture may expect;
// anything else (bad params, an unreadable tracker) fails the case.
var defaultLifecycle Lifecycle = LifecycleFunc(func(ctx context.Context, e *harness.Engine, event string, params map[string]any) error {
	err := lifecycle.FixtureEvent(ctx, e.Store, event, params)
	if errors.Is(err, lifecycle.ErrNotTracked) {
		return &conformance.ToolError{Message: err.Error()}
	}
	return err
})
