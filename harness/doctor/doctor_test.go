package doctor

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeCheck reports a problem until its repair ran.
type fakeCheck struct {
	name      string
	status    Status
	fixed     *atomic.Bool
	repairErr error
	panics    bool
}

func (f fakeCheck) Name() string { return f.name }

func (f fakeCheck) Run(context.Context) []Finding {
	if f.panics {
		panic("boom")
	}
	if f.fixed != nil && f.fixed.Load() {
		return []Finding{ok("fine now")}
	}
	fd := Finding{Status: f.status, Message: f.name + " is broken", Fix: "repair it"}
	if f.fixed != nil {
		fd = fd.repairedBy(func(context.Context) (string, error) {
			if f.repairErr != nil {
				return "", f.repairErr
			}
			f.fixed.Store(true)
			return "repaired " + f.name, nil
		})
	}
	return []Finding{fd}
}

func TestRun(t *testing.T) {
	type want struct {
		healthy          bool
		errors, warnings int
		fixable          int
		fixed            []string // "check: did" or "check! error"
		verdict          string
	}
	cases := []struct {
		name   string
		checks func() []Check
		fix    bool
		want   want
	}{
		{
			name: "all ok",
			checks: func() []Check {
				return []Check{fakeCheck{name: "a", status: StatusOK}, fakeCheck{name: "b", status: StatusOK}}
			},
			want: want{healthy: true, verdict: "healthy: all 2 findings ok (2 checks)"},
		},
		{
			name:   "warnings are healthy",
			checks: func() []Check { return []Check{fakeCheck{name: "a", status: StatusWarn}} },
			want:   want{healthy: true, warnings: 1, verdict: "healthy, with 1 warning (1 finding of 1 check)"},
		},
		{
			name: "errors without fix",
			checks: func() []Check {
				return []Check{fakeCheck{name: "a", status: StatusError, fixed: new(atomic.Bool)}, fakeCheck{name: "b", status: StatusError}}
			},
			want: want{errors: 2, fixable: 1, verdict: "not healthy: 2 errors, 0 warnings; `nexus doctor --fix` can fix 1 of them"},
		},
		{
			name: "fix repairs and checks again",
			checks: func() []Check {
				return []Check{fakeCheck{name: "a", status: StatusError, fixed: new(atomic.Bool)}, fakeCheck{name: "b", status: StatusWarn, fixed: new(atomic.Bool)}}
			},
			fix:  true,
			want: want{healthy: true, fixed: []string{"a: repaired a", "b: repaired b"}, verdict: "healthy: all 2 findings ok (2 checks)"},
		},
		{
			name: "a failing repair is reported and the problem stays",
			checks: func() []Check {
				return []Check{fakeCheck{name: "a", status: StatusError, fixed: new(atomic.Bool), repairErr: errors.New("disk full")}}
			},
			fix:  true,
			want: want{errors: 1, fixable: 1, fixed: []string{"a! disk full"}, verdict: "not healthy: 1 error"},
		},
		{
			name: "a panicking check is an error, the others still run",
			checks: func() []Check {
				return []Check{fakeCheck{name: "a", panics: true}, fakeCheck{name: "b", status: StatusOK}}
			},
			want: want{errors: 1, verdict: "not healthy: 1 error"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Run(context.Background(), c.checks(), c.fix)
			if r.Healthy != c.want.healthy || r.Errors != c.want.errors || r.Warnings != c.want.warnings || r.Fixable != c.want.fixable {
				t.Errorf("report %+v, want %+v", r, c.want)
			}
			var fixed []string
			for _, a := range r.Fixed {
				if a.Error != "" {
					fixed = append(fixed, a.Check+"! "+a.Error)
				} else {
					fixed = append(fixed, a.Check+": "+a.Did)
				}
			}
			if strings.Join(fixed, "|") != strings.Join(c.want.fixed, "|") {
				t.Errorf("fixed %q, want %q", fixed, c.want.fixed)
			}
			if !strings.HasPrefix(r.Verdict(), c.want.verdict) {
				t.Errorf("verdict %q, want prefix %q", r.Verdict(), c.want.verdict)
			}
			var b bytes.Buffer
			if err := r.WriteText(&b); err != nil || !strings.Contains(b.String(), r.Verdict()) {
				t.Errorf("text %q, %v", b.String(), err)
			}
		})
	}
}

func TestOnceRunsOneRepair(t *testing.T) {
	n := 0
	f := Once(func(context.Context) (string, error) { n++; return "did it", nil })
	first, _ := f(context.Background())
	second, _ := f(context.Background())
	if n != 1 || first != "did it" || second != "" {
		t.Errorf("n=%d first=%q second=%q", n, first, second)
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		500 * time.Millisecond: "500ms",
		42 * time.Second:       "42s",
		5 * time.Minute:        "5m",
		30 * time.Hour:         "30h",
		72 * time.Hour:         "3d",
	} {
		if got := age(d); got != want {
			t.Errorf("age(%s) = %q, want %q", d, got, want)
		}
	}
}
