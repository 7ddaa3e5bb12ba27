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
			ts := minTime(5, func() { d.Detect(small) })
			tb := minTime(5, func() { d.Detect(big) })
			ratio := float64(tb) / float64(max(ts, time.Microsecond))
			t.Logf("%v for 500 units, %v for 16,000: %.1fx", ts, tb, ratio)
			if ratio > 256 {
				t.Errorf("32x the message took %.1fx the time (%v vs %v): detection is no longer linear", ratio, tb, ts)
			}
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
