package state

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// tasksFrom decodes a tasks.json text.
func tasksFrom(t testing.TB, text string) *Tasks {
	t.Helper()
	var v Tasks
	if err := Decode([]byte(text), &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

// tasksDoc.encode gives Encode's bytes, with or without a previous
// version's items to copy from, for files with and without unknown
// members at every level.
func TestEncodeTasksMatchesEncode(t *testing.T) {
	cases := []struct{ name, base, next string }{
		{"empty", `{"goal":"","decisions":[],"tasks":[]}`, `{"goal":"","decisions":[],"tasks":[]}`},
		{"first task", `{"goal":"","decisions":[],"tasks":[]}`,
			`{"goal":"","decisions":[],"tasks":[{"id":1,"title":"t","context":"c","status":"pending","deps":[]}]}`},
		{"append", `{"goal":"g","decisions":["d"],"tasks":[{"id":1,"title":"t","context":"c","status":"pending","deps":[]}]}`,
			`{"goal":"g2","decisions":["d","e"],"tasks":[{"id":1,"title":"t","context":"c","status":"pending","deps":[]},{"id":2,"title":"u","context":"c","status":"pending","deps":[1],"owner":"engineer"}]}`},
		{"change middle", `{"goal":"g","decisions":[],"tasks":[{"id":1,"title":"a","context":"c","status":"pending","deps":[]},{"id":2,"title":"b","context":"c","status":"pending","deps":[]},{"id":3,"title":"c","context":"c","status":"pending","deps":[]}]}`,
			`{"goal":"g","decisions":[],"tasks":[{"id":1,"title":"a","context":"c","status":"pending","deps":[]},{"id":2,"title":"b","context":"c","status":"completed","deps":[]},{"id":3,"title":"c","context":"c","status":"pending","deps":[]}]}`},
		{"remove first", `{"goal":"g","decisions":[],"tasks":[{"id":1,"title":"a","context":"c","status":"pending","deps":[]},{"id":2,"title":"b","context":"c","status":"pending","deps":[]}]}`,
			`{"goal":"g","decisions":[],"tasks":[{"id":2,"title":"b","context":"c","status":"pending","deps":[]}]}`},
		{"unknown members", `{"schema_version":"0.5","goal":"g","decisions":[],"zz":{"a":[1,{"b":"x\ny"}],"tasks":[]},"aa":"\u00e9","tasks":[{"id":1,"title":"a","context":"c","status":"pending","deps":[],"x":{"tasks":[],"n":[{}]},"y":[]}]}`,
			`{"schema_version":"0.5","goal":"g","decisions":[],"zz":{"a":[1,{"b":"x\ny"}],"tasks":[]},"aa":"\u00e9","tasks":[{"id":1,"title":"a","context":"c","status":"pending","deps":[],"x":{"tasks":[],"n":[{}]},"y":[]},{"id":2,"title":"\"tasks\": [] </x>","context":"line\nbreak","status":"pending","deps":[1,2],"approach":"","z":{"k":[[],{}]}}]}`},
		{"no deps member", `{"goal":"g","decisions":[],"tasks":[{"id":1,"title":"a","context":"c","status":"pending"}]}`,
			`{"goal":"g","decisions":[],"tasks":[{"id":1,"title":"a","context":"c","status":"pending"},{"id":2,"title":"b","context":"c","status":"pending"}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base, next := tasksFrom(t, c.base), tasksFrom(t, c.next)
			_, set, err := tasksDoc.encode(base, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkEncode(t, tasksDoc, base, set, next)
		})
	}
}

// checkEncode encodes next from base's items and compares it and every
// item's span with Encode.
func checkEncode[V, T any](t testing.TB, d *arrayDoc[V, T], base *V, set *itemSet, next *V) {
	t.Helper()
	want, err := Encode(next)
	if err != nil {
		t.Fatal(err)
	}
	for _, prev := range []*itemSet{nil, set} {
		got, ns, err := d.encode(next, base, prev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("encode (reusing %v):\n%s\nEncode:\n%s", prev != nil, got, want)
		}
		items := *d.items(next)
		if len(ns.items) != len(items) {
			t.Fatalf("%d spans for %d items", len(ns.items), len(items))
		}
		for i := range items {
			var back T
			err := Decode(ns.raw(i), &back)
			b1, _ := MarshalCompact(&back)
			b2, _ := MarshalCompact(&items[i])
			if err != nil || !bytes.Equal(b1, b2) {
				t.Fatalf("span %d is not item %d: %q (%v)", i, i, ns.raw(i), err)
			}
		}
		// The file decodes, item by item, into next with the same spans.
		v, ds, err := d.decode(got, nil, nil)
		if err != nil || ds == nil || len(ds.items) != len(items) {
			t.Fatalf("decode of the encoded file: %v (%v)", err, ds)
		}
		for i := range items {
			if !bytes.Equal(ds.raw(i), ns.raw(i)) {
				t.Fatalf("item %d: decode's span %q, encode's %q", i, ds.raw(i), ns.raw(i))
			}
		}
		a, _ := MarshalCompact(v)
		b, _ := MarshalCompact(next)
		if !bytes.Equal(a, b) {
			t.Fatalf("decode of the encoded file:\n%s\nwant\n%s", a, b)
		}
	}
}

// FuzzEncodeTasks: for any tasks.json and any edit of it (a task changed,
// added or removed, the goal replaced), encoding the edit from the
// original's layout gives Encode's bytes.
func FuzzEncodeTasks(f *testing.F) {
	f.Add(`{"goal":"g","decisions":[],"tasks":[{"id":1,"title":"a","context":"c","status":"pending","deps":[]}]}`, uint64(1), "x")
	f.Add(`{"goal":"g","decisions":["a"],"x":{"tasks":[]},"tasks":[{"id":1,"title":"a","context":"c","status":"pending","deps":[],"e":[{"f":1}]},{"id":2,"title":"b","context":"c","status":"completed","deps":[1]}]}`, uint64(7), "\n\"tasks\": []")
	f.Fuzz(func(t *testing.T, text string, seed uint64, s string) {
		var base Tasks
		if Decode([]byte(text), &base) != nil {
			return
		}
		if _, err := Encode(&base); err != nil {
			return // not encodable at all (e.g. a duplicate unknown member)
		}
		_, set, err := tasksDoc.encode(&base, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		next := base.clone()
		r := rand.New(rand.NewPCG(seed, 1))
		switch op := r.IntN(4); {
		case op == 0 && len(next.Tasks) > 0:
			i := r.IntN(len(next.Tasks))
			next.Tasks[i].Title = s
		case op == 1:
			next.Tasks = append(next.Tasks, Task{ID: 99, Title: s, Context: s, Status: TaskPending, Deps: []int64{}, Owner: &s})
		case op == 2 && len(next.Tasks) > 0:
			i := r.IntN(len(next.Tasks))
			next.Tasks = append(next.Tasks[:i:i], next.Tasks[i+1:]...)
		default:
			next.Goal = s
		}
		checkEncode(t, tasksDoc, &base, set, next)
	})
}

// A transaction's write of tasks.json copies the unchanged tasks from the
// version it last wrote, and the file is Encode's bytes each time.
func TestTasksWriteReusesLayout(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	for i := 1; i <= 5; i++ {
		err := s.Update(ctx, []string{s.L.TasksPath()}, func(tx *Tx) error {
			tf, ok, err := tx.Tasks()
			if err != nil {
				return err
			}
			if !ok {
				tf = &Tasks{Goal: "g", Decisions: []string{}}
			}
			tf.Tasks = append(tf.Tasks, Task{ID: int64(i), Title: fmt.Sprint("task ", i), Context: "c", Status: TaskPending, Deps: []int64{},
				Extra: Extra{"note": jsontext.Value(`{"a":[1,2]}`)}})
			if i == 4 {
				tf.Tasks[1].Status = TaskCompleted
			}
			return tx.PutTasks(tf)
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(s.L.TasksPath())
		if err != nil {
			t.Fatal(err)
		}
		tf, _, err := s.ReadTasks()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Encode(tf)
		if !bytes.Equal(got, want) {
			t.Fatalf("write %d:\n%s\nwant:\n%s", i, got, want)
		}
		if e := s.cache.get(s.L.TasksPath()); e == nil || e.items == nil || len(e.items.items) != i {
			t.Fatalf("write %d: no items kept for the next write", i)
		}
	}
}

// decodeBoth decodes next item by item after base (re-using base's items)
// and whole, and fails unless both give the same value, or both fail.
func decodeBoth[V, T any](t *testing.T, d *arrayDoc[V, T], base, next []byte) (*itemSet, *itemSet) {
	t.Helper()
	bv, bs, err := d.decode(base, nil, nil)
	if err != nil {
		return nil, nil
	}
	wv, _, werr := d.decodeWhole(next)
	for _, prev := range []*itemSet{nil, bs} {
		var pv any
		if prev != nil {
			pv = bv
		}
		v, set, err := d.decode(next, pv, prev)
		if (err == nil) != (werr == nil) {
			t.Fatalf("item decode err %v, whole decode err %v:\n%s", err, werr, next)
		}
		if err != nil {
			continue
		}
		if !reflect.DeepEqual(v, wv) {
			t.Fatalf("item decode (after base: %v):\n%#v\nwhole decode:\n%#v", prev != nil, v, wv)
		}
		if set != nil {
			items := *d.items(v.(*V))
			if len(set.items) != len(items) {
				t.Fatalf("%d item records for %d items", len(set.items), len(items))
			}
			for i := range set.items {
				var x T
				if err := Decode(set.raw(i), &x); err != nil || !reflect.DeepEqual(x, items[i]) {
					t.Fatalf("item %d's bytes %q are not the item (%v)", i, set.raw(i), err)
				}
			}
		}
		if prev == bs {
			return bs, set
		}
	}
	return bs, nil
}

// FuzzDecodeItemsMatchesDecode: for any version of a file and any next
// version, decoding the next one item by item after the first (re-using
// the items whose bytes did not change) gives what decoding it whole
// gives, and fails where that fails.
//
//	go test -run '^$' -fuzz FuzzDecodeItemsMatchesDecode ./internal/state/
func FuzzDecodeItemsMatchesDecode(f *testing.F) {
	one := `{"id":1,"title":"a","context":"c","status":"pending","deps":[]}`
	two := `{"id":2,"title":"b","context":"c","status":"completed","deps":[1],"x":{"tasks":[]}}`
	for _, c := range [][2]string{
		{`{"goal":"g","decisions":[],"tasks":[` + one + `]}`, `{"goal":"g","decisions":[],"tasks":[` + one + `,` + two + `]}`},
		{`{"goal":"g","decisions":[],"tasks":[` + one + `,` + two + `]}`, `{"goal":"h","tasks":[` + two + `,` + one + `],"decisions":["d"]}`},
		{`{"goal":"g","decisions":[],"tasks":[` + one + `]}`, "{\n  \"goal\": \"g\",\n  \"tasks\": [\n    " + one + "\n  ],\n  \"decisions\": []\n}\n"},
		{`{"goal":"g","decisions":[],"tasks":[` + one + `]}`, `{"goal":"g","tasks":[` + one + `],"tasks":[]}`},
		{`{"goal":"g","decisions":[],"tasks":[` + one + `]}`, `{"goal":"g","tasks":[` + one + `]} x`},
		{`{"goal":"g","decisions":[],"tasks":[` + one + `]}`, `{"goal":"g","tasks":[` + one + `,]}`},
		{`{"goal":"g","decisions":[],"tasks":[` + one + `]}`, `{"goal":"g","tasks":null}`},
		{`{"goal":"g","decisions":[],"tasks":[` + one + `]}`, `{"goal":"g","tasks":[{"id":"1"}]}`},
	} {
		f.Add(uint8(0), c[0], c[1])
	}
	f.Add(uint8(1), `{"id":1,"topic":"t","issues":[{"id":1,"title":"a","status":"pending"}],"created_at":"x"}`,
		`{"id":1,"topic":"t","issues":[{"id":1,"title":"a","status":"pending"},{"id":2,"title":"b","status":"decided","decision":"d","how_agents":[]}],"created_at":"x"}`)
	f.Add(uint8(2), `[{"harness_id":"nexus","started_at":"x"}]`, `[{"harness_id":"nexus","started_at":"x"},{"harness_id":"nexus","started_at":"y","files_touched":[]}]`)
	f.Add(uint8(2), `[{"harness_id":"nexus","started_at":"x"}]`, `[{"harness_id":"nexus","started_at":"x"}] []`)
	f.Fuzz(func(t *testing.T, kind uint8, base, next string) {
		switch kind % 3 {
		case 0:
			decodeBoth(t, tasksDoc, []byte(base), []byte(next))
		case 1:
			decodeBoth(t, planDoc, []byte(base), []byte(next))
		default:
			decodeBoth(t, trackerDoc, []byte(base), []byte(next))
		}
	})
}

// A version another process wrote re-uses every item whose bytes it kept
// (decoded value, encoding, schema check) wherever it now is, and knows
// nothing yet of the items it changed.
func TestDecodeReusesUnchangedItems(t *testing.T) {
	var base Tasks
	base.Goal, base.Decisions = "g", []string{}
	for i := 1; i <= 6; i++ {
		base.Tasks = append(base.Tasks, Task{ID: int64(i), Title: fmt.Sprint("task ", i), Context: "c", Status: TaskPending, Deps: []int64{}})
	}
	data, set, err := tasksDoc.encode(&base, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range set.items {
		set.items[i].valid = true // as a commit leaves them
	}
	edited := base.clone()
	edited.Tasks[2].Status = TaskCompleted                                                                                    // changed
	edited.Tasks = append(edited.Tasks[:1:1], edited.Tasks[1:]...)                                                            // (a copy)
	edited.Tasks = append([]Task{{ID: 9, Title: "new", Context: "c", Status: TaskPending, Deps: []int64{}}}, edited.Tasks...) // all shifted by one
	next, err := Encode(edited)
	if err != nil {
		t.Fatal(err)
	}
	v, ns, err := tasksDoc.decode(next, &base, set)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.(*Tasks).Tasks, edited.Tasks; !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %v, want %v", got, want)
	}
	for i, it := range ns.items {
		reused := i != 0 && i != 3 // the new task, and task 3 whose status changed
		if it.valid != reused || it.encoded != reused {
			t.Fatalf("item %d (task %d): valid %v, encoding known %v; want %v", i, edited.Tasks[i].ID, it.valid, it.encoded, reused)
		}
		if !bytes.Contains(next, ns.raw(i)) {
			t.Fatalf("item %d's bytes are not the new file's", i)
		}
	}
	_ = data
}

// equal must tell apart two items that differ in any field, or an edit
// would be written with the unchanged item's old encoding.
func TestItemEqualSeesEveryField(t *testing.T) {
	check := func(t *testing.T, zero any, equal func(a, b any) bool) {
		typ := reflect.TypeOf(zero)
		for i := range typ.NumField() {
			f := typ.Field(i)
			a, b := reflect.New(typ).Elem(), reflect.New(typ).Elem()
			fb := b.Field(i)
			switch fb.Kind() {
			case reflect.String:
				fb.SetString("x")
			case reflect.Int64:
				fb.SetInt(7)
			case reflect.Pointer:
				fb.Set(reflect.New(f.Type.Elem()))
			case reflect.Slice:
				fb.Set(reflect.MakeSlice(f.Type, 1, 1))
			case reflect.Map:
				fb.Set(reflect.MakeMap(f.Type))
				val := reflect.New(f.Type.Elem()).Elem()
				if f.Type == reflect.TypeFor[Extra]() {
					val = reflect.ValueOf(jsontext.Value("1"))
				}
				fb.SetMapIndex(reflect.ValueOf("k"), val)
			default:
				t.Fatalf("field %s of kind %s: teach this test about it", f.Name, fb.Kind())
			}
			ea, _ := MarshalCompact(a.Addr().Interface())
			eb, _ := MarshalCompact(b.Addr().Interface())
			if bytes.Equal(ea, eb) {
				continue // encodes the same (e.g. an empty slice written as [] either way)
			}
			if equal(a.Addr().Interface(), b.Addr().Interface()) {
				t.Errorf("%s.%s: equal says two items that encode as %s and %s are equal", typ.Name(), f.Name, ea, eb)
			}
		}
	}
	check(t, Task{}, func(a, b any) bool { return a.(*Task).equal(b.(*Task)) })
	check(t, Issue{}, func(a, b any) bool { return a.(*Issue).equal(b.(*Issue)) })
	check(t, TrackerEntry{}, func(a, b any) bool { return a.(*TrackerEntry).equal(b.(*TrackerEntry)) })
}

// editCheck decodes next against base both ways decode may take (as an
// edit of base, and item by item) and whole, and fails unless each gives
// decoding whole's value or refuses. It reports whether the edit path
// took it.
func editCheck[V, T any](t *testing.T, d *arrayDoc[V, T], base, next []byte) bool {
	t.Helper()
	bv, bs, err := d.decode(base, nil, nil)
	if err != nil || bs == nil {
		return false
	}
	wv, _, werr := d.decodeWhole(next)
	bs.mu.Lock()
	ev, es, ok := d.decodeEdit(next, bv.(*V), bs)
	bs.mu.Unlock()
	if ok {
		if werr != nil {
			t.Fatalf("decodeEdit accepted what decoding whole refuses (%v):\nbase %q\nnext %q", werr, base, next)
		}
		if !reflect.DeepEqual(ev, wv) {
			t.Fatalf("decodeEdit:\n%#v\nwhole:\n%#v\nbase %q\nnext %q", ev, wv, base, next)
		}
		items := *d.items(ev.(*V))
		for i := range items {
			var x T
			if err := Decode(es.raw(i), &x); err != nil || !reflect.DeepEqual(x, items[i]) {
				t.Fatalf("item %d's bytes %q are not the item (%v)", i, es.raw(i), err)
			}
		}
		if es.data[es.open] != '[' || es.data[es.close] != ']' {
			t.Fatalf("array at %d..%d of %q", es.open, es.close, next)
		}
	}
	decodeBoth(t, d, base, next)
	return ok
}

// A change inside one item, or items added, removed or replaced, is read
// as an edit of the version before; a change around the array is not.
func TestDecodeEdit(t *testing.T) {
	one := `{"id":1,"title":"a","context":"c","status":"pending","deps":[]}`
	two := `{"id":2,"title":"b","context":"c","status":"pending","deps":[1]}`
	three := `{"id":3,"title":"c","context":"c","status":"pending","deps":[]}`
	doc := func(items ...string) string {
		return "{\n  \"goal\": \"g\",\n  \"decisions\": [],\n  \"tasks\": [\n    " + strings.Join(items, ",\n    ") + "\n  ]\n}\n"
	}
	base := doc(one, two, three)
	cases := []struct {
		name, next string
		edit       bool
	}{
		{"one item changed", doc(one, strings.Replace(two, "pending", "completed", 1), three), true},
		{"first item changed", doc(strings.Replace(one, `"a"`, `"aa"`, 1), two, three), true},
		{"last item changed", doc(one, two, strings.Replace(three, `"c"`, `"cc"`, 1)), true},
		{"item added at the end", doc(one, two, three, `{"id":4,"title":"d","context":"c","status":"pending","deps":[]}`), true},
		{"item added at the start", doc(`{"id":4,"title":"d","context":"c","status":"pending","deps":[]}`, one, two, three), true},
		{"item removed", doc(one, three), true},
		{"all items removed", doc(), true},
		{"items swapped", doc(one, three, two), true},
		{"goal changed", strings.Replace(base, `"g"`, `"h"`, 1), false},
		{"member after the array", strings.Replace(base, "\n  ]\n}", "\n  ],\n  \"x\": 1\n}", 1), false},
		{"broken item", doc(one, `{"id":2,`, three), false},
		{"item cut in two", doc(one, `{"id":2}, {"title":"b"}`, three), true},
		{"missing comma", strings.Replace(base, "},\n    {\"id\":2", "}\n    {\"id\":2", 1), false},
		{"extra comma", strings.Replace(base, "},\n    {\"id\":2", "},,\n    {\"id\":2", 1), false},
		{"trailing comma", doc(one, two, three+","), false},
		{"bracket closed early", strings.Replace(base, "},\n    {\"id\":2", "}],\n    {\"id\":2", 1), false},
		{"number after an item", strings.Replace(base, "},\n    {\"id\":2", "}1,\n    {\"id\":2", 1), false},
		{"wrong type", doc(one, `{"id":"2"}`, three), false},
		{"whitespace between items", strings.Replace(base, "},\n    {\"id\":2", "} \t,\r\n {\"id\":2", 1), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := editCheck(t, tasksDoc, []byte(base), []byte(c.next)); got != c.edit {
				t.Fatalf("read as an edit: %v, want %v", got, c.edit)
			}
		})
	}
	// The tracker is the array itself.
	tb := `[{"harness_id":"nexus","started_at":"x"}, {"harness_id":"nexus","started_at":"y"}]`
	if !editCheck(t, trackerDoc, []byte(tb), []byte(strings.Replace(tb, `"y"`, `"z"`, 1))) {
		t.Fatal("a tracker entry changed is not read as an edit")
	}
	if editCheck(t, trackerDoc, []byte(tb), []byte(tb+"1")) {
		t.Fatal("text after the tracker's array was read as an edit")
	}
}

// FuzzDecodeEditedFile: for any file and any byte edit of it (bytes cut
// and bytes inserted at one place), each way of reading the edited file
// after the original gives what decoding it whole gives, or refuses.
//
//	go test -run '^$' -fuzz FuzzDecodeEditedFile ./internal/state/
func FuzzDecodeEditedFile(f *testing.F) {
	base := "{\n  \"goal\": \"g\",\n  \"decisions\": [],\n  \"tasks\": [\n    {\"id\":1,\"title\":\"a\",\"context\":\"c\",\"status\":\"pending\",\"deps\":[]},\n    {\"id\":2,\"title\":\"b\",\"context\":\"c\",\"status\":\"pending\",\"deps\":[1],\"x\":{\"y\":[1,\"]\"]}}\n  ]\n}\n"
	for _, c := range []struct {
		at, cut int
		ins     string
	}{{60, 0, "x"}, {70, 3, `"q"`}, {56, 0, `{"id":9,"title":"z","context":"c","status":"pending","deps":[]},`}, {150, 10, ""}, {59, 1, "}"}, {140, 0, `"\"`}} {
		f.Add(uint8(0), base, uint16(c.at), uint16(c.cut), c.ins)
	}
	f.Add(uint8(2), `[{"harness_id":"nexus","started_at":"x"}, {"harness_id":"nexus","started_at":"y"}]`, uint16(44), uint16(0), `{"harness_id":"n"},`)
	f.Add(uint8(1), `{"id":1,"topic":"t","issues":[{"id":1,"title":"a","status":"pending"}],"created_at":"x"}`, uint16(60), uint16(0), `,{"id":2}`)
	f.Fuzz(func(t *testing.T, kind uint8, base string, at, cut uint16, ins string) {
		a := min(int(at), len(base))
		c := min(int(cut), len(base)-a)
		next := base[:a] + ins + base[a+c:]
		switch kind % 3 {
		case 0:
			editCheck(t, tasksDoc, []byte(base), []byte(next))
		case 1:
			editCheck(t, planDoc, []byte(base), []byte(next))
		default:
			editCheck(t, trackerDoc, []byte(base), []byte(next))
		}
	})
}
