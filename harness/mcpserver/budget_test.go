package mcpserver

import (
	"context"
	"testing"
	"time"
)

// A message waits while earlier ones hold the budget; small ones never do.
func TestBudget(t *testing.T) {
	b := newBudget()
	ctx := context.Background()
	first, err := b.take(ctx, MaxMessageBytes+1) // a line with its newline
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.take(ctx, smallMessage); err != nil {
		t.Fatal("a small message waited")
	}
	got := make(chan struct{})
	go func() {
		if release, err := b.take(ctx, smallMessage+1); err == nil {
			close(got)
			release()
		}
	}()
	select {
	case <-got:
		t.Fatal("a second large message did not wait for the first")
	case <-time.After(50 * time.Millisecond):
	}
	first()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the budget was not given back")
	}
	// A client that leaves stops waiting.
	hold, _ := b.take(ctx, MaxInFlightBytes)
	defer hold()
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := b.take(cctx, 1<<20); err == nil {
		t.Fatal("take returned without room")
	}
}
