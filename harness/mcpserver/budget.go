package mcpserver

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// MaxInFlightBytes bounds the bytes of the messages a server handles at
// once (read and not yet answered), on each transport: decoding and
// answering a message costs memory in proportion to its size, and the
// largest message alone takes nexus close to its 64 MiB ceiling. A
// message that does not fit waits until earlier ones are answered (stdio
// reads no further meanwhile; an HTTP request is read once it fits).
// Messages of up to smallMessage bytes do not count: they cost little,
// their number is bounded by the dispatcher's queue, and a cancellation
// must not wait behind the message it cancels.
const MaxInFlightBytes = MaxMessageBytes

const smallMessage = 4 << 10

// budget holds MaxInFlightBytes.
type budget struct{ sem *semaphore.Weighted }

func newBudget() budget { return budget{semaphore.NewWeighted(MaxInFlightBytes)} }

// take waits until a message of n bytes fits and returns what gives its
// share back (to call once it is answered). It fails only when ctx ends.
func (b budget) take(ctx context.Context, n int64) (release func(), err error) {
	if n <= smallMessage {
		return func() {}, nil
	}
	n = min(n, MaxInFlightBytes)
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return func() { b.sem.Release(n) }, nil
}
