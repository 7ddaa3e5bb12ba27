package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/nexus-harness/nexus/internal/atomicfile"
	"github.com/nexus-harness/nexus/internal/filelock"
	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/nexus-harness/nexus/schema"
)

// UpsertMemoryAccess is the hot path of memory-read observation: under the
// log's lock it replaces (or inserts) the record whose path is key with
// fn(old, found), checks the new record against memory-access.schema.json
// and rewrites memory-access.jsonl atomically.
//
// It differs from UpdateMemoryAccess in cost, not in what lands on disk:
//   - the parsed log is cached per process and reused while the file on
//     disk is still the one this process wrote last (same inode, size,
//     mtime and ctime), so a loop of observations does not re-read and
//     re-parse hundreds of lines each time;
//   - the schema validator runs on the record that changed; the lines
//     carried over were checked when they were read by validAccess, an
//     exact-or-stricter Go mirror of the schema (lines failing it are
//     dropped, as malformed lines are — digest §5.1);
//   - the file is replaced without fsync, by overwriting a spare file in
//     place and exchanging the two names (replaceAccessLog): a SIGKILLed
//     writer never leaves a torn log, and ReadMemoryAccess detects a read
//     that overlapped two replacements and reads again. A power loss can
//     cost recent increments or leave unreadable lines (dropped at the
//     next write) in what is a usage counter in an ignored folder.
func (s *Store) UpsertMemoryAccess(ctx context.Context, key string, fn func(old MemoryAccess, found bool) MemoryAccess) (MemoryAccess, error) {
	if key == "" {
		return MemoryAccess{}, errors.New("memory access record needs a path")
	}
	path := s.L.MemoryAccessPath()
	l, err := s.lockPath(ctx, filelock.PathFor(path))
	if err != nil {
		return MemoryAccess{}, err
	}
	defer l.Release()

	v, _ := accessLogs.LoadOrStore(path, &accessLog{})
	c := v.(*accessLog)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.load(path); err != nil {
		return MemoryAccess{}, err
	}
	i, found := c.index[key]
	var old MemoryAccess
	if found {
		old = c.recs[i]
	}
	rec := fn(old, found)
	rec.Path = key
	line, err := marshalCompact(rec)
	if err != nil {
		return MemoryAccess{}, fmt.Errorf("encode memory access record: %w", err)
	}
	if s.V != nil {
		var doc any
		_ = json.Unmarshal(line, &doc)
		ps, err := s.V.Validate(schema.StateMemory, doc)
		if err != nil {
			return MemoryAccess{}, err
		}
		if len(ps) > 0 {
			return MemoryAccess{}, &InvalidWriteError{Path: path, Problems: ps}
		}
	}

	size := len(line) + 1
	for j, ln := range c.lines {
		if !found || j != i {
			size += len(ln) + 1
		}
	}
	buf := make([]byte, 0, size)
	for j, ln := range c.lines {
		if found && j == i {
			ln = line
		}
		buf = append(buf, ln...)
		buf = append(buf, '\n')
	}
	if !found {
		buf = append(buf, line...)
		buf = append(buf, '\n')
	}
	if err := s.replaceAccessLog(path, buf); err != nil {
		c.valid = false
		return MemoryAccess{}, err
	}
	if found {
		c.recs[i], c.lines[i] = rec, line
	} else {
		c.index[key] = len(c.recs)
		c.recs = append(c.recs, rec)
		c.lines = append(c.lines, line)
	}
	c.id, c.valid = statID(path)
	return rec, nil
}

// accessLog is one process's parsed copy of a memory-access log.
type accessLog struct {
	mu    sync.Mutex
	valid bool
	id    fileID
	recs  []MemoryAccess
	lines [][]byte // canonical encoding of recs[i]
	index map[string]int
}

var accessLogs sync.Map // log path → *accessLog

// load makes the cache match the file on disk (the caller holds the lock).
func (c *accessLog) load(path string) error {
	id, ok := statID(path)
	if ok && c.valid && id == c.id {
		return nil
	}
	c.valid = false
	c.recs, c.lines, c.index = nil, nil, map[string]int{}
	lines, err := ReadLines(path)
	if err != nil {
		return err
	}
	for _, raw := range lines {
		// Lines this code wrote decode without encoding/json and are kept
		// byte for byte; anything else is decoded and re-encoded.
		r, canonical := parseCanonical(raw)
		if !canonical && json.Unmarshal(raw, &r) != nil {
			continue
		}
		if !validAccess(r) {
			continue
		}
		if i, dup := c.index[r.Path]; dup {
			// A log should hold one line per path; if a foreign writer left
			// two, fold them with the outputs contract's merge rule.
			c.recs[i] = MergeAccess(c.recs[i], r)
			c.lines[i], _ = marshalCompact(c.recs[i])
			continue
		}
		line := raw
		if !canonical {
			var err error
			if line, err = marshalCompact(r); err != nil {
				continue
			}
		}
		c.index[r.Path] = len(c.recs)
		c.recs = append(c.recs, r)
		c.lines = append(c.lines, line)
	}
	c.id, c.valid = id, ok
	return nil
}

// MergeAccess combines two records of the same path (outputs contract:
// sum the counts, keep the newest timestamp and the agent that went with
// it). On equal timestamps a's agent is kept.
func MergeAccess(a, b MemoryAccess) MemoryAccess {
	out := a
	out.AccessCount = a.AccessCount + b.AccessCount
	if AccessTime(b.LastAccessedTS).After(AccessTime(a.LastAccessedTS)) {
		out.LastAccessedTS, out.LastAgent = b.LastAccessedTS, b.LastAgent
	}
	if out.SchemaVersion == "" {
		out.SchemaVersion = b.SchemaVersion
	}
	return out
}

// AccessTime parses a last_accessed_ts (zero time when it does not parse).
func AccessTime(ts string) time.Time {
	t, _ := parseDateTime(ts)
	return t
}

// validAccess reports whether a decoded record satisfies
// memory-access.schema.json once re-encoded. It must never accept what the
// schema rejects (a fuzz test holds it to that); it may reject a little
// more (leap seconds).
func validAccess(r MemoryAccess) bool {
	if r.Path == "" || r.LastAgent == "" || r.AccessCount < 0 {
		return false
	}
	if _, ok := parseDateTime(r.LastAccessedTS); !ok {
		return false
	}
	return r.SchemaVersion == "" || validSchemaVersion(r.SchemaVersion)
}

func validSchemaVersion(s string) bool {
	// ^\d+\.\d+$ (\d is ASCII in ECMA-262 and Go's regexp alike)
	dot := -1
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '.' && dot < 0:
			dot = i
		case s[i] < '0' || s[i] > '9':
			return false
		}
	}
	return dot > 0 && dot < len(s)-1
}

// statID identifies the file now on disk; ok is false when it cannot
// (missing file, or a platform without the needed stat fields), which
// simply disables the cache.
func statID(path string) (fileID, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return fileID{}, false
	}
	return idOf(st)
}

// parseDateTime parses an RFC 3339 date-time
// (YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM), T and Z in either case) — the
// grammar JSON Schema's "date-time" format checks — without Go's
// leniencies (a comma before the fraction, say). Leap seconds are refused.
func parseDateTime(s string) (time.Time, bool) {
	if len(s) < 20 || (s[10] != 'T' && s[10] != 't') {
		return time.Time{}, false
	}
	day, err := time.Parse("2006-01-02", s[:10])
	if err != nil {
		return time.Time{}, false
	}
	num := func(p string, hi int) (int, bool) {
		if len(p) != 2 || p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9' {
			return 0, false
		}
		n := int(p[0]-'0')*10 + int(p[1]-'0')
		return n, n <= hi
	}
	rest := s[11:]
	if len(rest) < 9 || rest[2] != ':' || rest[5] != ':' {
		return time.Time{}, false
	}
	h, ok1 := num(rest[0:2], 23)
	m, ok2 := num(rest[3:5], 59)
	sec, ok3 := num(rest[6:8], 59)
	if !ok1 || !ok2 || !ok3 {
		return time.Time{}, false
	}
	rest = rest[8:]
	nsec := 0
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			if n <= 9 {
				nsec = nsec*10 + int(rest[n]-'0')
			}
			n++
		}
		if n == 1 {
			return time.Time{}, false
		}
		for d := n; d <= 9; d++ {
			nsec *= 10
		}
		rest = rest[n:]
	}
	loc := time.UTC
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		zh, ok1 := num(rest[1:3], 23)
		zm, ok2 := num(rest[4:6], 59)
		if !ok1 || !ok2 {
			return time.Time{}, false
		}
		off := zh*3600 + zm*60
		if rest[0] == '-' {
			off = -off
		}
		loc = time.FixedZone("", off)
	default:
		return time.Time{}, false
	}
	return time.Date(day.Year(), day.Month(), day.Day(), h, m, sec, nsec, loc), true
}

// errNoExchange: the file system cannot exchange two names atomically.
var errNoExchange = errors.New("rename exchange not supported")

// exchangeOff is set once the exchange failed as unsupported here.
var exchangeOff atomic.Bool

// replaceAccessLog makes data the content of the access log atomically:
// by exchange with a spare file where the file system supports it (no new
// inode or blocks per write), else by a new file renamed over the log.
func (s *Store) replaceAccessLog(path string, data []byte) error {
	if skip, err := s.prepareWrite(); skip || err != nil {
		return err
	}
	return s.beneath(path, func(root *os.Root, name string) error {
		if !exchangeOff.Load() {
			err := exchangeReplace(root, name, data)
			if !errors.Is(err, errNoExchange) {
				return err
			}
			exchangeOff.Store(true)
		}
		return atomicfile.WriteFileInNoSync(root, name, data, 0o644)
	})
}

// ReadStable reads a file that writers may replace by exchange (the
// memory-access log) without taking its lock: a read
// that overlapped a rewrite of the inode it opened (its size, mtime or
// ctime moved while reading) is retried. The file is read beneath its own
// folder, through the limit of its kind (see read.go). A missing file is
// (nil, false).
func ReadStable(path string) ([]byte, bool, error) {
	return readStable(path, LimitFor(path))
}

func readStable(path string, limit int64) ([]byte, bool, error) {
	for attempt := 0; attempt < 100; attempt++ {
		f, before, err := openAt(path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, false, nil
			}
			return nil, false, err
		}
		b, err2 := safefile.ReadAll(f, path, before.Size(), limit)
		after, err3 := f.Stat()
		f.Close()
		if err2 != nil {
			return nil, false, err2
		}
		if err3 != nil {
			return nil, false, fmt.Errorf("read %s: %w", path, err3)
		}
		if sameVersion(before, after) && int64(len(b)) == after.Size() {
			return b, true, nil
		}
	}
	return nil, false, fmt.Errorf("read %s: it kept changing while being read", path)
}

func sameVersion(a, b os.FileInfo) bool {
	ia, ok1 := idOf(a)
	ib, ok2 := idOf(b)
	if ok1 && ok2 {
		return ia == ib
	}
	return a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// readLinesStable is ReadLines over ReadStable, for a memory-access log
// (whatever its name: logs of other harnesses are merged too).
func readLinesStable(path string) ([][]byte, error) {
	b, ok, err := readStable(path, MaxMemoryAccessBytes)
	if err != nil || !ok {
		return nil, err
	}
	return splitLines(b), nil
}

// splitLines returns the complete, non-blank lines of b (a torn tail
// without a newline is skipped).
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		if line := bytes.TrimSpace(b[:i]); len(line) > 0 {
			out = append(out, line)
		}
		b = b[i+1:]
	}
	return out
}

// parseCanonical decodes a line in exactly the form marshalCompact gives a
// MemoryAccess whose strings need no escaping:
//
//	{"path":"…","last_accessed_ts":"…","access_count":N,"last_agent":"…"[,"schema_version":"…"]}
//
// ok is false for any other line (escapes, other member order, unknown
// members…), which then goes through encoding/json. When ok, re-encoding
// the record gives back the line byte for byte (a fuzz test holds it).
func parseCanonical(line []byte) (r MemoryAccess, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"path":`))
	if !ok {
		return r, false
	}
	if r.Path, rest, ok = plainString(rest); !ok {
		return r, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"last_accessed_ts":`)); !ok {
		return r, false
	}
	if r.LastAccessedTS, rest, ok = plainString(rest); !ok {
		return r, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"access_count":`)); !ok {
		return r, false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n > 18 || (rest[0] == '0' && n > 1) {
		return r, false
	}
	for _, d := range rest[:n] {
		r.AccessCount = r.AccessCount*10 + int64(d-'0')
	}
	if rest, ok = bytes.CutPrefix(rest[n:], []byte(`,"last_agent":`)); !ok {
		return r, false
	}
	if r.LastAgent, rest, ok = plainString(rest); !ok {
		return r, false
	}
	if v, found := bytes.CutPrefix(rest, []byte(`,"schema_version":`)); found {
		if r.SchemaVersion, rest, ok = plainString(v); !ok || r.SchemaVersion == "" {
			return r, false
		}
	}
	return r, string(rest) == "}"
}

// plainString reads a JSON string that encoding/json would write without
// any escape: no quote, backslash, control character, invalid UTF-8 or
// U+2028/U+2029.
func plainString(b []byte) (string, []byte, bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", nil, false
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 {
		return "", nil, false
	}
	s := b[1 : 1+end]
	for _, c := range s {
		if c < 0x20 || c == '\\' {
			return "", nil, false
		}
	}
	if !utf8.Valid(s) || bytes.Contains(s, []byte("\u2028")) || bytes.Contains(s, []byte("\u2029")) {
		return "", nil, false
	}
	return string(s), b[2+end:], true
}
