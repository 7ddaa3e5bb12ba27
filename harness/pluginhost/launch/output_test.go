package launch

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// A plugin's output lines reach the log at the level they carry.
func TestLineSinkLevels(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"plain words\n", "[INFO]  p: plain words"},
		{`{"@level":"warn","@message":"disk slow","@timestamp":"x","ms":12}` + "\n", "[WARN]  p: disk slow: ms=12"},
		{`{"@level":"debug","@message":"detail"}` + "\n", "[DEBUG] p: detail"},
		{`{"not":"hclog"}` + "\n", `[INFO]  p: {"not":"hclog"}`},
		{"[ERROR] it broke\n", "[ERROR] p: it broke"},
		{"panic: boom\ngoroutine 1 [running]:\n", "[ERROR] p: goroutine 1 [running]:"},
		{"no newline at the end", "[INFO]  p: no newline at the end"},
		{"\n  \n", ""},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		log := hclog.New(&hclog.LoggerOptions{Name: "p", Level: hclog.Trace, Output: &buf, DisableTime: true})
		tail := &lineTail{}
		s := newLineSink(log, tail)
		// Written in two chunks: lines may arrive split.
		half := len(tt.in) / 2
		s.Write([]byte(tt.in[:half]))
		s.Write([]byte(tt.in[half:]))
		s.Flush()
		got := strings.TrimSpace(buf.String())
		if tt.want == "" {
			if got != "" {
				t.Errorf("%q logged %q", tt.in, got)
			}
			continue
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("%q logged\n%s\nwant a line %q", tt.in, got, tt.want)
		}
	}
}

func TestLineTailKeepsTheLast(t *testing.T) {
	tail := &lineTail{}
	if got := tail.String(); got != "it wrote nothing to stderr" {
		t.Fatalf("empty tail: %q", got)
	}
	for _, l := range []string{"1", "2", "3", "4", "5", "6", strings.Repeat("x", 300)} {
		tail.add(l)
	}
	got := tail.String()
	if !strings.HasPrefix(got, "last stderr lines: 3 | 4 | 5 | 6 | xxx") || strings.Contains(got, "| 2 |") || len(got) > 300 {
		t.Fatalf("tail: %q", got)
	}
}
