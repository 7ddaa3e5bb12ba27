package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// historyText renders a history.json of cycles named c0..c(n-1), in the
// layout indent gives ("" = compact).
func historyText(n int, indent string, extra string) string {
	nl, in1, in2 := "", "", ""
	if indent != "" {
		nl, in1, in2 = "\n", indent, indent+indent
	}
	var b strings.Builder
	b.WriteString("{" + nl + in1 + `"schema_version": "0.5",` + nl + in1 + `"cycles": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `%s%s{"completed_at": "2026-01-01T00:00:00Z", "branch": "main", "plan": null, "tasks": [], "name": "c%d"}`, nl, in2, i)
	}
	if n > 0 {
		b.WriteString(nl + in1)
	}
	b.WriteString("]" + extra + nl + "}" + nl)
	return b.String()
}

// replaceFile writes content as another process does: a new file renamed
// over the old one.
func replaceFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path+".other", []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".other", path); err != nil {
		t.Fatal(err)
	}
}

// ReadHistorySince reads what was appended since a mark and nothing else;
// any other change makes it start over, and what it has seen in all is
// what a walk of the file from its start sees.
func TestReadHistorySince(t *testing.T) {
	s := newStore(t)
	p := s.L.HistoryPath()
	os.MkdirAll(s.L.Nexus, 0o755)
	var mark HistoryMark
	var seen []string
	restarts := 0
	read := func(t *testing.T) (calls int) {
		t.Helper()
		m, err := s.ReadHistorySince(mark, func() { restarts++; seen = nil }, func(raw []byte) error {
			calls++
			i := strings.Index(string(raw), `"name": "`)
			seen = append(seen, string(raw[i+9:i+9+strings.IndexByte(string(raw[i+9:]), '"')]))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		mark = m
		return calls
	}
	want := func(t *testing.T, n int) {
		t.Helper()
		if len(seen) != n {
			t.Fatalf("seen %v, want c0..c%d", seen, n-1)
		}
		for i, name := range seen {
			if name != fmt.Sprint("c", i) {
				t.Fatalf("seen %v, want c0..c%d", seen, n-1)
			}
		}
		if mark.Cycles() != n {
			t.Fatalf("mark covers %d cycles, want %d", mark.Cycles(), n)
		}
	}
	steps := []struct {
		name     string
		content  string
		calls    int  // fn calls expected
		restart  bool // a walk from the start expected
		numCycle int
	}{
		{"no file", "", 0, true, 0},
		{"empty", historyText(0, "  ", ""), 0, true, 0},
		{"first cycles", historyText(3, "  ", ""), 3, false, 3},
		{"unchanged", historyText(3, "  ", ""), 0, false, 3},
		{"one appended", historyText(4, "  ", ""), 1, false, 4},
		{"two appended", historyText(6, "  ", ""), 2, false, 6},
		{"a member after the array", historyText(7, "  ", `, "x_note": {"cycles": 1}`), 1, false, 7},
		{"that member changed", historyText(7, "  ", `, "x_note": 2`), 0, false, 7},
		{"a cycle edited", strings.Replace(historyText(7, "  ", ""), `"c2"`, `"c2", "edited": true`, 1), 7, true, 7},
		{"reformatted", historyText(8, "\t", ""), 8, true, 8},
		{"appended, compact", historyText(8, "", ""), 8, true, 8},
		{"appended to compact", historyText(9, "", ""), 1, false, 9},
		{"a second cycles member after", historyText(9, "", `, "cycles": []`), 9, true, 0},
		{"back to one", historyText(2, "  ", ""), 2, true, 2},
		{"truncated", historyText(1, "  ", ""), 1, true, 1},
		{"removed", "", 0, true, 0},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.content == "" {
				os.Remove(p)
			} else {
				replaceFile(t, p, st.content)
			}
			before := restarts
			if calls := read(t); calls != st.calls {
				t.Fatalf("fn called %d times, want %d", calls, st.calls)
			}
			if (restarts > before) != st.restart {
				t.Fatalf("walked from the start: %v, want %v", restarts > before, st.restart)
			}
			if st.name == "a second cycles member after" {
				// A walk from the start sees both arrays (the second
				// is empty); no mark is kept for such a file.
				if mark.prefix != 0 {
					t.Fatalf("a mark was kept for a file with two cycles arrays")
				}
				return
			}
			want(t, st.numCycle)
		})
	}
}

// A history.json that is not JSON, or whose cycles are not an array, is
// corrupt however it is reached; fn's error is returned as it is.
func TestReadHistorySinceErrors(t *testing.T) {
	s := newStore(t)
	p := s.L.HistoryPath()
	os.MkdirAll(s.L.Nexus, 0o755)
	replaceFile(t, p, historyText(2, "  ", ""))
	mark, err := s.ReadHistorySince(HistoryMark{}, func() {}, func([]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{
		strings.TrimSuffix(historyText(3, "  ", ""), "}\n"),
		strings.Replace(historyText(3, "  ", ""), `"name": "c2"}`, `"name": "c2"`, 1),
		`{"cycles": {}}`,
		`[]`,
	} {
		replaceFile(t, p, c)
		var ce *CorruptError
		if _, err := s.ReadHistorySince(mark, func() {}, func([]byte) error { return nil }); !errors.As(err, &ce) {
			t.Fatalf("%q: err = %v, want a CorruptError", c, err)
		}
	}
	replaceFile(t, p, historyText(3, "  ", ""))
	stop := errors.New("stop")
	if _, err := s.ReadHistorySince(mark, func() {}, func([]byte) error { return stop }); err != stop {
		t.Fatalf("err = %v, want fn's", err)
	}
}

// FuzzReadHistorySince: for any history.json and any edit of it, reading
// the edited file from the mark of the first sees what walking it from
// its start sees (or fails as that fails).
//
//	go test -run '^$' -fuzz FuzzReadHistorySince ./internal/state/
func FuzzReadHistorySince(f *testing.F) {
	base := historyText(3, "  ", "")
	f.Add(base, uint16(len(base)-6), uint16(0), `,{"name": "c3"}`)
	f.Add(base, uint16(len(base)-6), uint16(0), `,{"name": "c3"}]`)
	f.Add(base, uint16(len(base)-4), uint16(0), `, "x": [1]`)
	f.Add(base, uint16(40), uint16(5), `x`)
	f.Add(historyText(0, "", ""), uint16(12), uint16(0), `{"a":1}`)
	s := newStore(f)
	p := s.L.HistoryPath()
	os.MkdirAll(s.L.Nexus, 0o755)
	f.Fuzz(func(t *testing.T, base string, at, cut uint16, ins string) {
		a := min(int(at), len(base))
		c := min(int(cut), len(base)-a)
		next := base[:a] + ins + base[a+c:]
		replaceFile(t, p, base)
		var got []string
		collect := func(raw []byte) error { got = append(got, string(raw)); return nil }
		mark, err := s.ReadHistorySince(HistoryMark{}, func() { got = nil }, collect)
		if err != nil {
			return
		}
		replaceFile(t, p, next)
		_, err = s.ReadHistorySince(mark, func() { got = nil }, collect)
		var want []string
		_, werr := s.ReadHistorySince(HistoryMark{}, func() { want = nil }, func(raw []byte) error { want = append(want, string(raw)); return nil })
		if (err == nil) != (werr == nil) {
			t.Fatalf("from the mark: %v; from the start: %v\nbase %q\nnext %q", err, werr, base, next)
		}
		if err == nil && strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("from the mark: %q\nfrom the start: %q\nbase %q\nnext %q", got, want, base, next)
		}
	})
}

// BenchmarkAppendCycle measures closing a cycle (Tx.AppendCycle and the
// durable write) on a history.json of n cycles of about 3.8 KB each, as
// the side-by-side benchmark generates them.
//
//	go test -run '^$' -bench AppendCycle -benchtime 10x ./internal/state/
func BenchmarkAppendCycle(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("cycles=%d", n), func(b *testing.B) {
			s := newStore(b)
			os.MkdirAll(s.L.Nexus, 0o755)
			task := Task{ID: 1, Title: "Implement part 1 of the storage layer", Context: strings.Repeat("context ", 16), Status: TaskCompleted, Deps: []int64{}, Approach: Ptr(strings.Repeat("approach ", 8))}
			c := Cycle{SchemaVersion: SchemaVersion, CompletedAt: "2026-01-01T00:00:00.000Z", Branch: "main",
				Plan:  jsontext.Value(`{"id":1,"topic":"Cycle: storage work","issues":[{"id":1,"title":"Which format","status":"decided","decision":"JSON"}],"created_at":"2026-01-01T00:00:00.000Z"}`),
				Tasks: []Task{task, task, task, task, task}}
			raw, _ := MarshalCompact(c)
			h := History{SchemaVersion: SchemaVersion, Cycles: make([]jsontext.Value, n)}
			for i := range h.Cycles {
				h.Cycles[i] = raw
			}
			data, _ := Encode(&h)
			replaceFile(b, s.L.HistoryPath(), string(data))
			ctx := context.Background()
			for b.Loop() {
				if err := s.Update(ctx, []string{s.L.HistoryPath()}, func(tx *Tx) error { _, err := tx.AppendCycle(c); return err }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// appendWhole is AppendCycle's other way: decode, append, re-indent.
func appendWhole(t testing.TB, data []byte, c Cycle) []byte {
	t.Helper()
	var h History
	if err := Decode(data, &h); err != nil {
		t.Fatal(err)
	}
	raw, _ := MarshalCompact(c)
	h.Cycles = append(h.Cycles, raw)
	out, err := Encode(&h)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// On a history.json nexus wrote, putting the new cycle after the last one
// in the file's bytes gives what decoding, appending and re-indenting
// gives, whether the store has a mark of the file or not; a file laid out
// otherwise is re-indented as before.
func TestAppendCycleSpliceIsEncode(t *testing.T) {
	legacy := []string{
		`{"completed_at":"2020-01-01T00:00:00Z","branch":"old","plan":{"id":3,"topic":"x & <y> \u00e9","issues":[],"created_at":"2020-01-01T00:00:00Z"},"tasks":[],"memoryHint":1.50}`,
		`{"schema_version":"0.5","completed_at":"2026-01-01T00:00:00Z","branch":"main","plan":null,"tasks":[{"id":1,"title":"t","context":"c","status":"completed","deps":[]}],"x":{"y":[[],{}]}}`,
	}
	c := Cycle{SchemaVersion: SchemaVersion, CompletedAt: "2026-02-01T00:00:00.000Z", Branch: "main", Plan: jsontext.Value(`{"id":1,"topic":"t","issues":[],"created_at":"2026-02-01T00:00:00Z"}`),
		Tasks: []Task{{ID: 1, Title: "t \"q\" </x>", Context: "line\nbreak", Status: TaskCompleted, Deps: []int64{}}}}
	var files []string
	for n := range 4 {
		h := History{SchemaVersion: SchemaVersion, Cycles: []jsontext.Value{}}
		for i := range n {
			h.Cycles = append(h.Cycles, jsontext.Value(legacy[i%2]))
		}
		for _, extra := range []Extra{nil, {"x_after": jsontext.Value(`{"cycles":[1]}`)}} {
			h.Extra = extra
			b, _ := Encode(&h)
			files = append(files, string(b))
		}
	}
	files = append(files,
		`{"cycles":[`+legacy[0]+`]}`,                      // compact
		"{\n\t\"cycles\": [\n\t\t"+legacy[1]+"\n\t]\n}\n", // tabs
		"{\n  \"cycles\": []\n}\n",
	)
	for i, f := range files {
		for _, marked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d/marked=%v", i, marked), func(t *testing.T) {
				s := newStore(t)
				os.MkdirAll(s.L.Nexus, 0o755)
				replaceFile(t, s.L.HistoryPath(), f)
				if marked {
					if _, err := s.ReadHistorySince(HistoryMark{}, func() {}, func([]byte) error { return nil }); err != nil {
						t.Fatal(err)
					}
				}
				// Files laid out as Encode writes them take the splice.
				if at, _ := appendPoint([]byte(f), s.cache.historyMark()); (at >= 0) != (i < 8 || i == 10) {
					t.Fatalf("appendPoint = %d", at)
				}
				want := appendWhole(t, []byte(f), c)
				for round := range 2 { // the second append starts from the first's mark
					var total int
					err := s.Update(context.Background(), []string{s.L.HistoryPath()}, func(tx *Tx) (err error) {
						total, err = tx.AppendCycle(c)
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
					got, _ := os.ReadFile(s.L.HistoryPath())
					var h History
					if Decode(got, &h) != nil || total != len(h.Cycles) {
						t.Fatalf("round %d: total %d for %d cycles:\n%s", round, total, len(h.Cycles), got)
					}
					if string(got) != string(want) {
						t.Fatalf("round %d:\n%s\nwant (decoded, appended, re-indented):\n%s", round, got, want)
					}
					want = appendWhole(t, got, c)
				}
			})
		}
	}
}
