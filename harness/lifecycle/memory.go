package lifecycle

import (
	"context"
	"time"
)

// MemoryHandler is how the lifecycle engine reaches nexus's memory
// lifecycle (package memory implements it). A nil handler means memory
// features are off: reads are not observed and [m] / [m:gc] say so.
type MemoryHandler interface {
	Observe(ctx context.Context, path, agent string, at time.Time) error      // a successful read of a file under .nexus/memory/
	SaveFromTag(ctx context.Context, text string) (message string, err error) // [m] text
	GCFromTag(ctx context.Context, text string) (message string, err error)   // [m:gc] text
	AutoGC(ctx context.Context) (message string, err error)                   // session end (runs only when config enables it)
}
