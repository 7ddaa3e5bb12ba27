package lifecycle

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/tags"
)

// TestInlineActionCap: a message runs at most MaxInlineActions inline
// actions, in message order; the rest are not run, and the reply (context
// and notice), the log and `tags explain` say which.
func TestInlineActionCap(t *testing.T) {
	saves := func(n int, tag string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%s note %d ", tag, i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name    string
		prompt  string
		run     int    // SaveFromTag calls
		report  string // in the context and the notice; "" for none
		explain int    // explanations saying "not run"
	}{
		{"one", saves(1, "[m]"), 1, "", 0},
		{"at the cap", saves(MaxInlineActions, "[m]"), MaxInlineActions, "", 0},
		{"one over", saves(MaxInlineActions+1, "[m]"), MaxInlineActions,
			fmt.Sprintf("and not the other 1 (a message runs at most %d): [m] ×1.", MaxInlineActions), 1},
		{"mixed over", saves(MaxInlineActions, "[m]") + "[rule:a] x [d] y [rule:a] z [m:gc] w [plan] p", MaxInlineActions,
			"and not the other 4 (a message runs at most 20): [rule:a] ×2, [d] ×1, [m:gc] ×1.", 4},
		{"many kinds over", saves(MaxInlineActions, "[m]") + saves(1, "[rule:a]") + saves(1, "[rule:b]") + saves(1, "[rule:c]") +
			saves(1, "[rule:d]") + saves(1, "[rule:e]") + saves(1, "[rule:f]") + saves(1, "[rule:g]") + saves(1, "[rule:h]") + saves(2, "[rule:i]"),
			MaxInlineActions, "[rule:h] ×1, and 1 other tags.", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := &recMemory{}
			e, s := newEngine(t, Options{Memory: mem, Tools: &fakeTools{}})
			r := handle(t, e, Event{Name: UserMessage, Prompt: tc.prompt})
			if len(mem.calls) != tc.run {
				t.Errorf("%d saves, want %d", len(mem.calls), tc.run)
			}
			for i, c := range mem.calls {
				if c != fmt.Sprintf("save note %d", i) {
					t.Errorf("save %d = %q: not in message order", i, c)
				}
			}
			for _, got := range []string{r.Context, r.Notice} {
				if has := strings.Contains(got, "not the other"); has != (tc.report != "") || !strings.Contains(got, tc.report) {
					t.Errorf("reply lacks %q:\n%s", tc.report, got)
				}
			}
			logged := logLines(t, s.L.LogPath())
			wantLog := tc.run
			if tc.report != "" {
				wantLog++
				if last := logged[len(logged)-1]; last.Level != "warn" || !strings.Contains(last.Msg, tc.report) {
					t.Errorf("last log line %+v", last)
				}
			}
			if len(logged) != wantLog {
				t.Errorf("%d log lines, want %d", len(logged), wantLog)
			}
			notRun := 0
			dry, _ := newEngine(t, Options{Store: s.DryRun(), Memory: &recMemory{}, Tools: &fakeTools{}})
			xs, _, err := dry.Explain(context.Background(), tc.prompt)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range xs {
				if strings.Contains(x.What, "not run, a message runs at most") {
					notRun++
				}
			}
			if notRun != tc.explain {
				t.Errorf("explain marks %d actions not run, want %d", notRun, tc.explain)
			}
		})
	}
}

// TestTagScanWindow: tags past the first tags.MaxScanBytes of a message
// are not read; the reply and the log say how many bracket tokens were
// left, and a long message without any past the window passes unchanged.
func TestTagScanWindow(t *testing.T) {
	mem := &recMemory{}
	e, s := newEngine(t, Options{Memory: mem, Tools: &fakeTools{}})
	long := strings.Repeat("x", tags.MaxScanBytes)
	r := handle(t, e, Event{Name: UserMessage, Prompt: "[m] note " + long + " [m] late [plan]"})
	want := "and not the 2 bracket tokens after that"
	if len(mem.calls) != 1 || !strings.Contains(r.Context, want) || !strings.Contains(r.Notice, want) {
		t.Errorf("%d saves; reply %q / %q", len(mem.calls), clip(r.Context), r.Notice)
	}
	if l := logLines(t, s.L.LogPath()); len(l) == 0 || l[len(l)-1].Level != "warn" || !strings.Contains(l[len(l)-1].Msg, want) {
		t.Errorf("log %+v", l)
	}
	if r := handle(t, e, Event{Name: UserMessage, Prompt: long + long}); r.Context != "" || r.Notice != "" {
		t.Errorf("a long message without tags: %q / %q", clip(r.Context), r.Notice)
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func logLines(t *testing.T, path string) []LogLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []LogLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l LogLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}
