package launch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// What a plugin writes to its stderr (and, once a Go plugin's pluginserver.Serve
// runs, to os.Stdout and os.Stderr, which go-plugin forwards over its stdio
// stream) reaches nexus's log one line at a time:
//   - a JSON object with "@level" and "@message" (hclog's JSON format)
//     keeps its level and its other members;
//   - a line starting with [TRACE], [DEBUG], [INFO], [WARN] or [ERROR]
//     keeps that level;
//   - "panic: " and "fatal error: " and every line after them are errors;
//   - any other line is info.
//
// The last lines are also kept, so that a plugin that fails to start or
// dies is reported with what it said.

// maxLogLine bounds one logged line; longer lines are cut.
const maxLogLine = 4 << 10

// tailLines and tailLineBytes bound what is kept for error messages.
const (
	tailLines     = 5
	tailLineBytes = 240
)

// lineTail keeps a plugin's last output lines. Safe for concurrent use.
type lineTail struct {
	mu    sync.Mutex
	lines []string
}

func (t *lineTail) add(line string) {
	if len(line) > tailLineBytes {
		line = line[:tailLineBytes] + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == tailLines {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:tailLines-1]
	}
	t.lines = append(t.lines, line)
}

// String renders the kept lines for an error message.
func (t *lineTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "it wrote nothing to stderr"
	}
	return "last stderr lines: " + strings.Join(t.lines, " | ")
}

// lineSink logs complete lines at the level they carry.
type lineSink struct {
	log  hclog.Logger
	tail *lineTail

	mu      sync.Mutex
	partial []byte
	inPanic bool
}

func newLineSink(log hclog.Logger, tail *lineTail) *lineSink {
	return &lineSink{log: log, tail: tail}
}

// Write takes any chunk of output; complete lines are logged at once, a
// trailing partial line waits for its end (or Flush).
func (s *lineSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.partial = append(s.partial, p...)
			if len(s.partial) > maxLogLine {
				s.lineLocked(s.partial)
				s.partial = s.partial[:0]
			}
			break
		}
		line := p[:i]
		if len(s.partial) > 0 {
			line = append(s.partial, line...)
			s.partial = s.partial[:0]
		}
		s.lineLocked(line)
		p = p[i+1:]
	}
	return n, nil
}

// Flush logs a trailing partial line.
func (s *lineSink) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.partial) > 0 {
		s.lineLocked(s.partial)
		s.partial = s.partial[:0]
	}
}

// pump reads r to its end, logging each line, then flushes.
func (s *lineSink) pump(r io.Reader) {
	br := bufio.NewReaderSize(r, 8<<10)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			_, _ = s.Write(chunk)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	s.Flush()
}

func (s *lineSink) lineLocked(raw []byte) {
	line := strings.TrimRight(string(raw), "\r\n")
	if strings.TrimSpace(line) == "" {
		return
	}
	if len(line) > maxLogLine {
		line = line[:maxLogLine] + "…"
	}
	if s.tail != nil {
		s.tail.add(line)
	}
	if level, msg, args, ok := parseJSONLine(line); ok {
		s.log.Log(level, msg, args...)
		return
	}
	level := hclog.Info
	for _, p := range []struct {
		prefix string
		level  hclog.Level
	}{{"[TRACE]", hclog.Trace}, {"[DEBUG]", hclog.Debug}, {"[INFO]", hclog.Info}, {"[WARN]", hclog.Warn}, {"[ERROR]", hclog.Error}} {
		if strings.HasPrefix(line, p.prefix) {
			level, line = p.level, strings.TrimSpace(line[len(p.prefix):])
			break
		}
	}
	if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
		s.inPanic = true
	}
	if s.inPanic {
		level = hclog.Error
	}
	s.log.Log(level, line)
}

// parseJSONLine reads an hclog JSON line: its level, message and other
// members (timestamps, module and caller dropped: nexus's log has its own).
func parseJSONLine(line string) (hclog.Level, string, []any, bool) {
	if !strings.HasPrefix(line, "{") {
		return 0, "", nil, false
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return 0, "", nil, false
	}
	msg, ok := m["@message"].(string)
	if !ok {
		return 0, "", nil, false
	}
	level := hclog.Info
	if l, ok := m["@level"].(string); ok {
		if lv := hclog.LevelFromString(l); lv != hclog.NoLevel {
			level = lv
		}
	}
	var args []any
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "@message", "@level", "@timestamp", "@module", "@caller":
			continue
		}
		args = append(args, k, m[k])
	}
	return level, msg, args, true
}

// goPluginLogger is the logger handed to go-plugin for its own messages.
// Those describe nexus's side of the protocol, which nexus reports itself
// in its own words (a failed start names the plugin, what it did and its
// last lines), so go-plugin's informational messages become debug ones,
// and the warnings that are expected for a plugin that already exited, or
// one that serves no stdio stream, are dropped to debug too.
type goPluginLogger struct {
	hclog.Logger
	exited func() bool
}

func (l goPluginLogger) Info(msg string, args ...any) { l.Logger.Debug(msg, args...) }

func (l goPluginLogger) Warn(msg string, args ...any) {
	switch {
	case strings.HasPrefix(msg, "stdio service"),
		(msg == "plugin failed to exit gracefully" || msg == "error closing client during Kill") && l.exited():
		l.Logger.Debug(msg, args...)
	default:
		l.Logger.Warn(msg, args...)
	}
}

func (l goPluginLogger) Error(msg string, args ...any) {
	if msg == "plugin process exited" { // reported by nexus with its cause
		l.Logger.Debug(msg, args...)
		return
	}
	l.Logger.Error(msg, args...)
}

func (l goPluginLogger) Log(level hclog.Level, msg string, args ...any) {
	switch level {
	case hclog.Info:
		l.Info(msg, args...)
	case hclog.Warn:
		l.Warn(msg, args...)
	case hclog.Error:
		l.Error(msg, args...)
	default:
		l.Logger.Log(level, msg, args...)
	}
}

func (l goPluginLogger) Named(name string) hclog.Logger {
	return goPluginLogger{Logger: l.Logger.Named(name), exited: l.exited}
}

func (l goPluginLogger) With(args ...any) hclog.Logger {
	return goPluginLogger{Logger: l.Logger.With(args...), exited: l.exited}
}
