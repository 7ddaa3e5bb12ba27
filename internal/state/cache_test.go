package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

const tasksJSON = `{"goal":"g","decisions":[],"tasks":[{"id":1,"title":"t","context":"c","status":"%s","deps":[]}]}`

func readStatus(t *testing.T, s *Store) string {
	t.Helper()
	tf, ok, err := s.ReadTasks()
	if err != nil || !ok {
		t.Fatalf("read: %v %v", ok, err)
	}
	return tf.Tasks[0].Status
}

// The cache never serves a version the file no longer has: an in-place
// rewrite of the same size within the same clock tick keeps size and
// times, and is caught because the entry is racy and its hash differs.
func TestCacheSeesEveryChange(t *testing.T) {
	s := newStore(t)
	p := s.L.TasksPath()
	writeFile(t, p, fmt.Sprintf(tasksJSON, "pending"))
	if got := readStatus(t, s); got != "pending" {
		t.Fatalf("status %q", got)
	}
	// Same length, written in place (same inode) and its times put back.
	st, _ := os.Stat(p)
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, tasksJSON, "complet") // 7 bytes, like "pending"
	f.Close()
	os.Chtimes(p, st.ModTime(), st.ModTime())
	if got := readStatus(t, s); got != "complet" {
		t.Fatalf("after an in-place rewrite in the same tick: status %q, want complet", got)
	}
	// A replacement by rename (new inode) is seen once the entry is no
	// longer racy, by its identity alone.
	time.Sleep(2 * racyWindow)
	readStatus(t, s)
	tmp := p + ".tmp"
	writeFile(t, tmp, fmt.Sprintf(tasksJSON, "in_progress"))
	os.Rename(tmp, p)
	if got := readStatus(t, s); got != "in_progress" {
		t.Fatalf("after a rename: status %q", got)
	}
	os.Remove(p)
	if _, ok, err := s.ReadTasks(); ok || err != nil {
		t.Fatalf("after removal: %v %v", ok, err)
	}
}

// An in-place edit of the same size with the modification time put back
// (touch -d @<old mtime>) is seen although the entry was confirmed long
// after the file's last change (it is not racy): the change time, which no
// user-space call can set back, is part of the identity (issue 22).
func TestCacheSeesEditWithTimesPutBack(t *testing.T) {
	s := newStore(t)
	p := s.L.TasksPath()
	writeFile(t, p, fmt.Sprintf(tasksJSON, "pending"))
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	time.Sleep(2 * racyWindow) // the change time is no longer recent
	readStatus(t, s)
	if e := s.cache.get(p); e == nil || (e.idKnown && e.racy()) {
		t.Fatalf("entry %+v: want a cached, settled entry", e)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, tasksJSON, "complet")
	f.Close()
	os.Chtimes(p, old, old)
	if got := readStatus(t, s); got != "complet" {
		t.Fatalf("status %q after a same-size edit with its times put back, want complet", got)
	}
}

// An unchanged file is served from the cache: the same value, no parse.
func TestCacheServesUnchangedFile(t *testing.T) {
	s := newStore(t)
	writeFile(t, s.L.TasksPath(), fmt.Sprintf(tasksJSON, "pending"))
	time.Sleep(2 * racyWindow)
	a, _, _ := s.ReadTasks()
	b, _, _ := s.ReadTasks()
	if a != b {
		t.Fatal("an unchanged tasks.json was parsed twice")
	}
	// A transaction gets a copy: changing it leaves the cached value alone.
	err := s.Update(context.Background(), []string{s.L.TasksPath()}, func(tx *Tx) error {
		tf, _, err := tx.Tasks()
		if err != nil {
			return err
		}
		tf.Tasks[0].Status = TaskCompleted
		return fmt.Errorf("abandon")
	})
	if err == nil || a.Tasks[0].Status != TaskPending {
		t.Fatalf("the cached value was changed through a transaction: %v %q", err, a.Tasks[0].Status)
	}
}

// Readers and writers of one store run concurrently (go test -race).
func TestCacheConcurrentReadersAndWriters(t *testing.T) {
	s := newStore(t)
	writeFile(t, s.L.TasksPath(), fmt.Sprintf(tasksJSON, "pending"))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				if w%2 == 0 {
					tf, ok, err := s.ReadTasks()
					if err != nil || !ok || len(tf.Tasks) == 0 {
						t.Errorf("read: %v %v", ok, err)
					}
					continue
				}
				err := s.Update(context.Background(), []string{s.L.TasksPath()}, func(tx *Tx) error {
					tf, _, err := tx.Tasks()
					if err != nil {
						return err
					}
					tf.Tasks = append(tf.Tasks, Task{ID: int64(100*w + i + 2), Title: "t", Context: "c", Status: TaskPending})
					return tx.PutTasks(tf)
				})
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	tf, _, _ := s.ReadTasks()
	if len(tf.Tasks) != 41 {
		t.Fatalf("%d tasks, want 41 (no write lost)", len(tf.Tasks))
	}
}

func TestPeekTasks(t *testing.T) {
	s := newStore(t)
	writeFile(t, s.L.TasksPath(), `{"goal":"g","decisions":["d"],"x":1,"tasks":[
	  {"id":1,"title":"a","context":"ca","status":"pending","deps":[],"owner":"engineer","approach":"ap","acceptance":"ac","x_future":true},
	  {"id":2,"title":"b","context":"cb","status":"completed","deps":[1],"risk":"r"}]}`)
	tf, ok, err := PeekTasks(s.L)
	if err != nil || !ok || tf.Goal != "g" || len(tf.Tasks) != 2 || *tf.Tasks[0].Owner != "engineer" || *tf.Tasks[0].Acceptance != "ac" ||
		tf.Tasks[0].Context != "" || tf.Tasks[1].Deps[0] != 1 {
		t.Fatalf("PeekTasks = %+v, %v, %v", tf, ok, err)
	}
	full, err := PeekTask(s.L, 1)
	if err != nil || full.ID != 2 || full.Context != "cb" || *full.Risk != "r" {
		t.Fatalf("PeekTask(1) = %+v, %v", full, err)
	}
	if _, err := PeekTask(s.L, 2); err == nil {
		t.Fatal("PeekTask past the end: no error")
	}
	writeFile(t, s.L.TasksPath(), `{"tasks":[`)
	var ce *CorruptError
	if _, _, err := PeekTasks(s.L); !errors.As(err, &ce) {
		t.Fatalf("torn file: %v", err)
	}
}

// A racy entry is confirmed by hashing the file as it is read, without
// keeping a copy when the bytes are the entry's; bytes that differ under
// the same identity (an in-place rewrite within one clock tick) are read
// and returned.
func TestReadWithIDConfirmsByHash(t *testing.T) {
	s := newStore(t)
	p := s.L.TasksPath()
	content := fmt.Sprintf(tasksJSON, "pending")
	writeFile(t, p, content)
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	id, known := idOf(st)
	if !known {
		t.Skip("no file identity on this platform")
	}
	same := &cacheEntry{id: id, idKnown: true, hash: hashBytes([]byte(content))}
	if b, gotID, _, ok, err := readWithID(s.L, p, same); err != nil || !ok || b != nil || gotID != id {
		t.Fatalf("same bytes: b %q ok %v err %v", b, ok, err)
	}
	other := &cacheEntry{id: id, idKnown: true, hash: hashBytes([]byte(content)) + 1}
	if b, _, _, ok, err := readWithID(s.L, p, other); err != nil || !ok || string(b) != content {
		t.Fatalf("other bytes under the same identity: b %q ok %v err %v", b, ok, err)
	}
	if b, _, _, ok, err := readWithID(s.L, p, nil); err != nil || !ok || string(b) != content {
		t.Fatalf("no entry: b %q ok %v err %v", b, ok, err)
	}
}
