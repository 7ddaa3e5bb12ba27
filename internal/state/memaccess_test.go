package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

func bump(agent, ts string) func(MemoryAccess, bool) MemoryAccess {
	return func(old MemoryAccess, _ bool) MemoryAccess {
		old.AccessCount++
		old.LastAgent, old.LastAccessedTS = agent, ts
		return old
	}
}

func TestUpsertMemoryAccessCountsAndKeepsOthers(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ts := "2026-04-16T08:52:55.250Z"
	for i := 0; i < 3; i++ {
		if _, err := s.UpsertMemoryAccess(ctx, "/p/.nexus/memory/a.md", bump("engineer", ts)); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := s.UpsertMemoryAccess(ctx, "/p/.nexus/memory/b.md", bump("lead", ts))
	if err != nil || rec.AccessCount != 1 {
		t.Fatalf("rec %+v, %v", rec, err)
	}
	got, err := ReadMemoryAccess(s.L.MemoryAccessPath())
	if err != nil {
		t.Fatal(err)
	}
	want := []MemoryAccess{
		{Path: "/p/.nexus/memory/a.md", LastAccessedTS: ts, AccessCount: 3, LastAgent: "engineer"},
		{Path: "/p/.nexus/memory/b.md", LastAccessedTS: ts, AccessCount: 1, LastAgent: "lead"},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("records = %+v", got)
	}
}

// A write by another process (a new file on disk) must be seen even though
// this process has the log cached.
func TestUpsertMemoryAccessSeesForeignRewrite(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ts := "2026-04-16T08:52:55.250Z"
	if _, err := s.UpsertMemoryAccess(ctx, "/m/a.md", bump("x", ts)); err != nil {
		t.Fatal(err)
	}
	foreign := `{"path":"/m/a.md","last_accessed_ts":"2026-04-16T09:00:00.000Z","access_count":41,"last_agent":"y"}` + "\n" +
		`{"path":"/m/c.md","last_accessed_ts":"2026-04-16T09:00:00.000Z","access_count":2,"last_agent":"y","schema_version":"0.5"}` + "\n"
	writeFile(t, s.L.MemoryAccessPath(), foreign)
	rec, err := s.UpsertMemoryAccess(ctx, "/m/a.md", bump("x", ts))
	if err != nil || rec.AccessCount != 42 {
		t.Fatalf("rec %+v, %v (the cached count was used instead of the file's)", rec, err)
	}
	got, _ := ReadMemoryAccess(s.L.MemoryAccessPath())
	if len(got) != 2 || got[1].Path != "/m/c.md" || got[1].SchemaVersion != "0.5" {
		t.Fatalf("records = %+v", got)
	}
}

func TestUpsertMemoryAccessDropsMalformedAndFoldsDuplicates(t *testing.T) {
	s := newStore(t)
	lines := []string{
		`{"path":"/m/a.md","last_accessed_ts":"2026-04-16T08:00:00.000Z","access_count":2,"last_agent":"old"}`,
		`not json`,
		`{"path":"/m/bad-count.md","last_accessed_ts":"2026-04-16T08:00:00.000Z","access_count":-1,"last_agent":"x"}`,
		`{"path":"/m/bad-ts.md","last_accessed_ts":"yesterday","access_count":1,"last_agent":"x"}`,
		`{"path":"/m/bad-agent.md","last_accessed_ts":"2026-04-16T08:00:00.000Z","access_count":1,"last_agent":""}`,
		`{"path":"/m/bad-version.md","last_accessed_ts":"2026-04-16T08:00:00.000Z","access_count":1,"last_agent":"x","schema_version":"v1"}`,
		`{"path":"/m/a.md","last_accessed_ts":"2026-04-16T09:00:00.000Z","access_count":3,"last_agent":"new"}`,
	}
	writeFile(t, s.L.MemoryAccessPath(), strings.Join(lines, "\n")+"\n")
	if _, err := s.UpsertMemoryAccess(context.Background(), "/m/z.md", bump("x", "2026-04-16T10:00:00.000Z")); err != nil {
		t.Fatal(err)
	}
	got, _ := ReadMemoryAccess(s.L.MemoryAccessPath())
	if len(got) != 2 {
		t.Fatalf("records = %+v", got)
	}
	if a := got[0]; a.AccessCount != 5 || a.LastAgent != "new" || a.LastAccessedTS != "2026-04-16T09:00:00.000Z" {
		t.Fatalf("duplicates folded into %+v", a)
	}
	assertAccessFileValid(t, s)
}

func TestUpsertMemoryAccessRejectsInvalidRecord(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.UpsertMemoryAccess(ctx, "/m/a.md", bump("x", "2026-04-16T08:00:00.000Z")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(s.L.MemoryAccessPath())
	_, err := s.UpsertMemoryAccess(ctx, "/m/a.md", bump("", "2026-04-16T08:00:00.000Z"))
	var iw *InvalidWriteError
	if !errors.As(err, &iw) {
		t.Fatalf("err = %v, want an InvalidWriteError", err)
	}
	after, _ := os.ReadFile(s.L.MemoryAccessPath())
	if string(before) != string(after) {
		t.Fatal("a rejected record changed the file")
	}
	// The cache must not have kept the rejected record either.
	rec, err := s.UpsertMemoryAccess(ctx, "/m/a.md", bump("y", "2026-04-16T08:00:00.000Z"))
	if err != nil || rec.AccessCount != 2 {
		t.Fatalf("rec %+v, %v", rec, err)
	}
}

func TestMergeAccess(t *testing.T) {
	a := MemoryAccess{Path: "/m/a.md", LastAccessedTS: "2026-04-16T08:00:00.000Z", AccessCount: 2, LastAgent: "a"}
	b := MemoryAccess{Path: "/m/a.md", LastAccessedTS: "2026-04-16T10:00:00+02:00", AccessCount: 5, LastAgent: "b"}
	// 10:00+02:00 is 08:00Z: equal instants keep a's agent.
	if m := MergeAccess(a, b); m.AccessCount != 7 || m.LastAgent != "a" {
		t.Fatalf("merge = %+v", m)
	}
	b.LastAccessedTS = "2026-04-16T08:00:00.001Z"
	if m := MergeAccess(a, b); m.LastAgent != "b" || m.LastAccessedTS != b.LastAccessedTS {
		t.Fatalf("merge = %+v", m)
	}
}

func assertAccessFileValid(t *testing.T, s *Store) {
	t.Helper()
	lines, err := ReadLines(s.L.MemoryAccessPath())
	if err != nil {
		t.Fatal(err)
	}
	for i, ln := range lines {
		var v any
		if err := json.Unmarshal(ln, &v); err != nil {
			t.Fatalf("line %d not JSON: %s", i+1, ln)
		}
		if ps, err := s.V.Validate(schema.StateMemory, v); err != nil || len(ps) > 0 {
			t.Fatalf("line %d invalid: %v %v", i+1, ps, err)
		}
	}
}

func TestParseDateTime(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"2026-04-16T08:52:55.250Z", true},
		{"2026-04-16T08:52:55Z", true},
		{"2026-04-16t08:52:55z", true},
		{"2026-04-16T08:52:55.123456789123+05:30", true},
		{"2026-04-16T08:52:55-23:59", true},
		{"2026-02-30T08:52:55Z", false},
		{"2026-04-16T24:00:00Z", false},
		{"2026-04-16T23:59:60Z", false}, // leap second: stricter than the schema, on purpose
		{"2026-04-16T08:52:55,5Z", false},
		{"2026-04-16T08:52:55.Z", false},
		{"2026-04-16T08:52:55+2400", false},
		{"2026-04-16 08:52:55Z", false},
		{"2026-04-16", false},
	} {
		if _, ok := parseDateTime(c.in); ok != c.ok {
			t.Errorf("parseDateTime(%q) ok = %v, want %v", c.in, ok, c.ok)
		}
	}
	tm, _ := parseDateTime("2026-04-16T10:00:00.5+02:00")
	if got := Format(tm); got != "2026-04-16T08:00:00.500Z" {
		t.Fatalf("parsed instant %s", got)
	}
}

// validAccess must never accept a record the schema rejects.
func FuzzValidAccessImpliesSchemaValid(f *testing.F) {
	set := schema.NewCoreSet(testenv.CoreDir(f))
	f.Add("/m/a.md", "2026-04-16T08:52:55.250Z", int64(1), "lead", "")
	f.Add("x", "2026-04-16t08:52:55+05:30", int64(0), "a", "0.5")
	f.Add("x", "0000-01-01T00:00:00.0000000000z", int64(9), "a", "10.20")
	f.Fuzz(func(t *testing.T, path, ts string, count int64, agent, version string) {
		r := MemoryAccess{Path: path, LastAccessedTS: ts, AccessCount: count, LastAgent: agent, SchemaVersion: version}
		if !validAccess(r) {
			return
		}
		line, err := marshalCompact(r)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatal(err)
		}
		ps, err := set.Validate(schema.StateMemory, v)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) > 0 {
			t.Fatalf("validAccess accepted %s, the schema says %v", line, ps)
		}
	})
}

// Both ways of replacing the log (exchange with a spare, or a new file
// renamed over it) leave the same content.
func TestUpsertMemoryAccessReplacementPaths(t *testing.T) {
	defer exchangeOff.Store(exchangeOff.Load())
	for _, off := range []bool{false, true} {
		exchangeOff.Store(off)
		s := newStore(t)
		ctx := context.Background()
		for i := 0; i < 5; i++ {
			key := "/m/" + string(rune('a'+i%2)) + ".md"
			if _, err := s.UpsertMemoryAccess(ctx, key, bump("x", "2026-04-16T08:00:00.000Z")); err != nil {
				t.Fatal(err)
			}
		}
		got, _ := ReadMemoryAccess(s.L.MemoryAccessPath())
		if len(got) != 2 || got[0].AccessCount != 3 || got[1].AccessCount != 2 {
			t.Fatalf("exchange off=%v: records %+v", off, got)
		}
		assertAccessFileValid(t, s)
		_, err := os.Stat(filepath.Join(s.L.HarnessDir(), ".memory-access.jsonl.spare"))
		if off != errors.Is(err, os.ErrNotExist) {
			t.Fatalf("exchange off=%v: spare file: %v", off, err)
		}
	}
}

func TestReadStableMissing(t *testing.T) {
	b, ok, err := ReadStable(filepath.Join(t.TempDir(), "none"))
	if b != nil || ok || err != nil {
		t.Fatalf("ReadStable of a missing file = %q, %v, %v", b, ok, err)
	}
}

// Lock-free readers always see a whole log while writers replace it.
func TestReadMemoryAccessWhileWriting(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	const keys = 50
	for i := 0; i < keys; i++ {
		if _, err := s.UpsertMemoryAccess(ctx, fmt.Sprintf("/m/file-%02d.md", i), bump("w", "2026-04-16T08:00:00.000Z")); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 400; i++ {
				if _, err := s.UpsertMemoryAccess(ctx, fmt.Sprintf("/m/file-%02d.md", (i*7+w)%keys), bump("w", "2026-04-16T08:00:00.000Z")); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	reads := 0
	var readErr error
	go func() {
		wg.Wait()
		close(done)
	}()
loop:
	for {
		select {
		case <-done:
			break loop
		default:
		}
		recs, err := ReadMemoryAccess(s.L.MemoryAccessPath())
		if err != nil || len(recs) != keys {
			readErr = fmt.Errorf("read %d: %d records, %v", reads, len(recs), err)
			break
		}
		reads++
	}
	<-done
	if readErr != nil {
		t.Fatal(readErr)
	}
	t.Logf("%d whole reads during 800 writes", reads)
}

// BenchmarkUpsertMemoryAccess500 measures one observation against a
// 500-line log, warm (the process wrote the log last) and cold (as in a
// fresh hook process, minus the one-time schema compilation).
//
//	go test ./internal/state -run '^$' -bench UpsertMemoryAccess500 -count 5
func BenchmarkUpsertMemoryAccess500(b *testing.B) {
	for _, cold := range []bool{false, true} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			l, _ := NewLayout(b.TempDir(), "nexus")
			s := New(l, schema.NewCoreSet(testenv.CoreDir(b)))
			ctx := context.Background()
			keys := make([]string, 500)
			for i := range keys {
				keys[i] = fmt.Sprintf("/home/someone/projects/example/.nexus/memory/empirical-file-number-%03d.md", i)
				if _, err := s.UpsertMemoryAccess(ctx, keys[i], bump("researcher", "2026-04-16T08:00:00.000Z")); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if cold {
					accessLogs.Delete(s.L.MemoryAccessPath())
				}
				if _, err := s.UpsertMemoryAccess(ctx, keys[i%len(keys)], bump("engineer", "2026-04-16T09:00:00.000Z")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// parseCanonical accepts only lines that re-encode to themselves, and
// accepts what marshalCompact writes for plain strings.
func FuzzParseCanonical(f *testing.F) {
	f.Add([]byte(`{"path":"/m/a.md","last_accessed_ts":"2026-04-16T08:52:55.250Z","access_count":3,"last_agent":"lead"}`))
	f.Add([]byte(`{"path":"/m/a.md","last_accessed_ts":"x","access_count":0,"last_agent":"é<&>","schema_version":"0.5"}`))
	f.Add([]byte(`{"path":"/m/\"a.md","last_accessed_ts":"x","access_count":01,"last_agent":"a"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, ok := parseCanonical(line)
		if !ok {
			return
		}
		again, err := marshalCompact(r)
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != string(line) {
			t.Fatalf("parseCanonical accepted %q, which re-encodes as %q", line, again)
		}
	})
}

func TestParseCanonicalAcceptsOwnLines(t *testing.T) {
	for _, r := range []MemoryAccess{
		{Path: "/m/a.md", LastAccessedTS: "2026-04-16T08:52:55.250Z", AccessCount: 0, LastAgent: "lead"},
		{Path: "/m/ü <&> ü.md", LastAccessedTS: "2026-04-16T08:52:55.250Z", AccessCount: 123456789, LastAgent: "researcher-1", SchemaVersion: "0.5"},
	} {
		line, _ := marshalCompact(r)
		got, ok := parseCanonical(line)
		if !ok || got != r {
			t.Errorf("parseCanonical(%s) = %+v, %v", line, got, ok)
		}
	}
	for _, line := range []string{
		`{"path":"/m/a\"b.md","last_accessed_ts":"t","access_count":1,"last_agent":"a"}`, // escape
		`{"last_agent":"a","path":"/m/a.md","last_accessed_ts":"t","access_count":1}`,    // order
		`{"path":"/m/a.md","last_accessed_ts":"t","access_count":1,"last_agent":"a","x":1}`,
		`{"path":"/m/a.md","last_accessed_ts":"t","access_count":1.0,"last_agent":"a"}`,
		` {"path":"/m/a.md","last_accessed_ts":"t","access_count":1,"last_agent":"a"}`,
	} {
		if _, ok := parseCanonical([]byte(line)); ok {
			t.Errorf("parseCanonical accepted %s", line)
		}
	}
}
