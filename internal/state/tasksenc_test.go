package state

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
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

// encodeTasks gives Encode's bytes, with or without a previous layout to
// copy from, for files with and without unknown members at every level.
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
			_, lay, err := encodeTasks(base, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkEncodeTasks(t, base, lay, next)
		})
	}
}

// checkEncodeTasks encodes next from base's layout and compares it and
// every span with Encode.
func checkEncodeTasks(t testing.TB, base *Tasks, lay *taskLayout, next *Tasks) {
	t.Helper()
	want, err := Encode(next)
	if err != nil {
		t.Fatal(err)
	}
	for _, prev := range []*taskLayout{nil, lay} {
		got, nl, err := encodeTasks(next, base, prev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("encodeTasks (reusing %v):\n%s\nEncode:\n%s", prev != nil, got, want)
		}
		if len(nl.spans) != len(next.Tasks) {
			t.Fatalf("%d spans for %d tasks", len(nl.spans), len(next.Tasks))
		}
		for i := range next.Tasks {
			var back Task
			err := Decode(nl.task(i), &back)
			b1, _ := MarshalCompact(&back)
			b2, _ := MarshalCompact(&next.Tasks[i])
			if err != nil || !bytes.Equal(b1, b2) {
				t.Fatalf("span %d is not task %d: %q (%v)", i, i, nl.task(i), err)
			}
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
		_, lay, err := encodeTasks(&base, nil, nil)
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
		checkEncodeTasks(t, &base, lay, next)
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
		if e := s.cache.get(s.L.TasksPath()); e == nil || e.layout == nil || len(e.layout.spans) != i {
			t.Fatalf("write %d: no layout kept for the next write", i)
		}
	}
}
