package tags

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// Messages built by repeating one unit: tags alone, and tags mixed with
// every kind of region that once cost a scan per token (quotes, code spans,
// quoted lines, unmatched backtick runs, escapes).
var scaleUnits = []string{
	"[d] ", "[m] ", "[rule:x] ", "[plan] ", "[zz] ",
	`"q" [d] `, "`x` [d] ", "> [d]\n", "“a `b` c” [m] ", "\\`` [d] ", "``` x\n[d]\n```\n",
}

// minTime is the fastest of runs calls of f: the least disturbed by other
// work on the machine. The collector is off while f runs, so its pauses
// (which come at sizes, not per call) do not count.
func minTime(runs int, f func()) time.Duration {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	best := time.Duration(1<<63 - 1)
	for range runs {
		runtime.GC()
		t0 := time.Now()
		f()
		if d := time.Since(t0); d < best {
			best = d
		}
	}
	return best
}

// TestDetectIsLinear fails when detection time grows faster than the
// message: 32 times the message must cost well under 1,024 times the time
// (what a scan per token costs). The bound, 256, is 8 times what linear
// costs: the race detector, caches the big message does not fit and a
// loaded machine each add to the ratio (about 100 seen under -race).
func TestDetectIsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	d := New(loadCore(t).Tags())
	for _, u := range scaleUnits {
		t.Run(fmt.Sprintf("%q", u), func(t *testing.T) {
			small := strings.Repeat(u, 500)
			big := strings.Repeat(u, 16000)
			// A loaded machine (or the race detector's GC) can stall one
			// measurement; quadratic time fails every attempt (about 1,024x),
			// a stall does not repeat three times.
			var ts, tb time.Duration
			var ratio float64
			for attempt := 0; attempt < 3; attempt++ {
				ts = minTime(5, func() { d.Detect(small) })
				tb = minTime(5, func() { d.Detect(big) })
				ratio = float64(tb) / float64(max(ts, time.Microsecond))
				t.Logf("%v for 500 units, %v for 16,000: %.1fx", ts, tb, ratio)
				if ratio <= 256 {
					return
				}
			}
			t.Errorf("32x the message took %.1fx the time (%v vs %v) in three attempts: detection is no longer linear", ratio, tb, ts)
		})
	}
}

func BenchmarkDetect(b *testing.B) {
	d := New(loadCore(b).Tags())
	for _, c := range []struct {
		unit string
		n    int
	}{{"[d] ", 20000}, {`"q" [d] `, 20000}, {"`x` [d] ", 20000}, {"plain words and one [plan] tag\n", 10}} {
		msg := strings.Repeat(c.unit, c.n)
		b.Run(fmt.Sprintf("%q×%d", c.unit, c.n), func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				d.Detect(msg)
			}
		})
	}
}

// TestDetectScanWindow: a message is read for tags up to MaxScanBytes; a
// token that ends there fires, one past it is only counted in Unread, and
// an action's text still runs to the end of the message.
func TestDetectScanWindow(t *testing.T) {
	d := New(loadCore(t).Tags())
	pad := func(n int) string { return strings.Repeat("x", n) }
	r := d.Detect(pad(MaxScanBytes-len("[plan]")) + "[plan]")
	if r.Skill == nil || r.Unread != 0 {
		t.Errorf("a tag ending at the window's end: skill %v, unread %d", r.Skill, r.Unread)
	}
	r = d.Detect("[m] " + pad(MaxScanBytes) + " [plan] [d] tail")
	if r.Skill != nil || len(r.Actions) != 1 || r.Unread != 2 {
		t.Fatalf("tags past the window: skill %v, %d actions, unread %d", r.Skill, len(r.Actions), r.Unread)
	}
	if !strings.HasSuffix(r.Actions[0].Text, "[d] tail") {
		t.Errorf("the action's text stops short of the message's end: …%q", r.Actions[0].Text[len(r.Actions[0].Text)-20:])
	}
	if r = d.Detect(pad(2 * MaxScanBytes)); r.Unread != 0 {
		t.Errorf("a long message without tags: unread %d", r.Unread)
	}
}

// TestDetectMemoryIsBounded: a prompt as large as a hook payload may be
// (9 MiB), of the units that cost the most, allocates a bounded amount:
// one of backtick spans took 1 GB, one of 2.4 million [d] tags 290 MB.
func TestDetectMemoryIsBounded(t *testing.T) {
	d := New(loadCore(t).Tags())
	for _, u := range scaleUnits {
		msg := strings.Repeat(u, (9<<20)/len(u))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d.Detect(msg)
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
			t.Errorf("%q × %d: %d MiB allocated", u, (9<<20)/len(u), n>>20)
		}
	}
}
