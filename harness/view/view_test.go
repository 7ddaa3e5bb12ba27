package view

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/atomicfile"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/memory"
)

// fakeDecisions stands in for the store's command line.
type fakeDecisions struct {
	mu     sync.Mutex
	store  string
	checks []string
}

func (f *fakeDecisions) Export(context.Context) (*DecisionExport, error) {
	return &DecisionExport{Store: f.store, Decisions: []DecisionRecord{
		{Number: 2, Title: "Use <b>PostgreSQL</b>", Date: "2026-01-02", Status: "active", Supersedes: "1", File: "decisions/002-x.md"},
		{Number: 1, Title: "Use SQLite", Date: "2026-01-01", Status: "superseded", SupersededBy: "2", File: "decisions/001-x.md"},
	}}, nil
}

func (f *fakeDecisions) Check(_ context.Context, approach, _ string) (string, error) {
	f.mu.Lock()
	f.checks = append(f.checks, approach)
	f.mu.Unlock()
	return "checked: " + approach, nil
}

// fakeMemory is a gc report of two notes.
type fakeMemory struct{ dir string }

func (m fakeMemory) Report(context.Context) (*memory.Report, error) {
	three := 3
	return &memory.Report{Policy: memory.GCPolicy{MinDaysSinceAccess: &three}, Eligible: []string{},
		Files: []memory.FileReport{
			{File: "empirical-a.md", Path: filepath.Join(m.dir, "empirical-a.md"), Size: 10, AgeFrom: memory.AgeFromMtime, DaysSinceAccess: 5,
				Signals: memory.Signals{DaysSinceAccess: true}, SignalsMet: 1},
			{File: "notes.md", Path: filepath.Join(m.dir, "notes.md"), Size: 20, AgeFrom: memory.AgeFromLastAccess},
		}}, nil
}

func (fakeMemory) CategoryOf(f string) string {
	if strings.HasPrefix(f, "empirical-") {
		return "empirical"
	}
	return ""
}

// fixture is a project with a running view server and a signed-in client.
type fixture struct {
	t      *testing.T
	dir    string
	layout state.Layout
	base   string // http://127.0.0.1:PORT
	token  string
	client *http.Client // signed in (cookie jar)
	srv    *Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	l, err := state.NewLayout(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{l.HarnessDir(), l.MemoryDir(), filepath.Join(dir, "store", "decisions")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{t: t, dir: dir, layout: l}
	f.write(l.PlanPath(), `{"id":1,"topic":"T <img src=x onerror=alert(1)>","issues":[{"id":1,"title":"<script>alert(1)</script>","status":"decided","decision":"yes"}],"created_at":"2026-01-01T00:00:00Z"}`)
	f.write(l.TasksPath(), tasksJSON(`{"id":1,"title":"a","context":"","status":"completed","deps":[]}`,
		`{"id":2,"title":"b","context":"","status":"pending","deps":[1]}`, `{"id":3,"title":"c","context":"","status":"pending","deps":[2]}`))
	f.write(l.TrackerPath(), `[{"harness_id":"nexus","agent_name":"engineer","agent_id":"a1","started_at":"2026-01-01T00:00:00Z","status":"running","files_touched":["x.go"]}]`)
	f.write(filepath.Join(l.MemoryDir(), "empirical-a.md"), "a")
	srv, err := New(Options{Layout: l, History: tools.SearchHistory, Decisions: &fakeDecisions{store: filepath.Join(dir, "store")},
		Memory: fakeMemory{l.MemoryDir()}, Debounce: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.srv, f.token = srv, srv.Token()
	ctx, cancel := context.WithCancel(context.Background())
	urlc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, "127.0.0.1:0", func(u string) { urlc <- u }) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop within 10 s of its context ending")
		}
	})
	var u string
	select {
	case u = <-urlc:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	f.base = u[:strings.Index(u, "/?token=")]
	jar, _ := cookiejar.New(nil)
	f.client = &http.Client{Jar: jar, Timeout: 10 * time.Second}
	resp, err := f.client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.RawQuery != "" {
		t.Fatalf("signing in: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	return f
}

func tasksJSON(tasks ...string) string {
	return `{"goal":"g","decisions":[],"tasks":[` + strings.Join(tasks, ",") + `]}`
}

func (f *fixture) write(p, content string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := atomicfile.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) getJSON(path string, v any) {
	f.t.Helper()
	resp, err := f.client.Get(f.base + path)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		f.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		f.t.Fatalf("GET %s: %v\n%s", path, err, b)
	}
}

func TestAuthHostOrigin(t *testing.T) {
	f := newFixture(t)
	port := f.base[strings.LastIndex(f.base, ":")+1:]
	cookie := "nexus_view_" + port + "=" + f.token
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		host    string
		headers map[string]string
		cookie  bool
		want    int
	}{
		{name: "signed in", path: "/api/summary", cookie: true, want: 200},
		{name: "page", path: "/", cookie: true, want: 200},
		{name: "no cookie", path: "/api/summary", want: 401},
		{name: "no cookie, page", path: "/", want: 401},
		{name: "events without cookie", path: "/events", want: 401},
		{name: "wrong cookie", path: "/api/summary", headers: map[string]string{"Cookie": "nexus_view_" + port + "=" + strings.Repeat("0", 64)}, want: 401},
		{name: "wrong token", path: "/?token=" + strings.Repeat("0", 64), want: 401},
		{name: "token twice", path: "/?token=" + f.token + "&token=" + f.token, want: 401},
		{name: "good token", path: "/?token=" + f.token, want: 303},
		{name: "token on another path is no sign-in", path: "/api/summary?token=" + f.token, want: 401},
		{name: "localhost", path: "/api/summary", host: "localhost:" + port, cookie: true, want: 200},
		{name: "foreign host", path: "/api/summary", host: "evil.example:" + port, cookie: true, want: 403},
		{name: "rebinding host without port", path: "/api/summary", host: "evil.example", cookie: true, want: 403},
		{name: "other port", path: "/api/summary", host: "127.0.0.1:1", cookie: true, want: 403},
		{name: "foreign origin", path: "/api/summary", headers: map[string]string{"Origin": "http://evil.example"}, cookie: true, want: 403},
		{name: "another local page", path: "/api/summary", headers: map[string]string{"Origin": "http://127.0.0.1:1"}, cookie: true, want: 403},
		{name: "null origin", path: "/api/summary", headers: map[string]string{"Origin": "null"}, cookie: true, want: 403},
		{name: "own origin", path: "/api/summary", headers: map[string]string{"Origin": "http://127.0.0.1:" + port}, cookie: true, want: 200},
		{name: "cross-site fetch", path: "/api/summary", headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, cookie: true, want: 403},
		{name: "same-site fetch (another port)", path: "/api/summary", headers: map[string]string{"Sec-Fetch-Site": "same-site"}, cookie: true, want: 403},
		{name: "check needs JSON", method: "POST", path: "/api/decisions/check", cookie: true, want: 415},
		{name: "no writes by GET", method: "PUT", path: "/api/summary", cookie: true, want: 405},
		{name: "nothing outside the assets", path: "/assets/..%2fview.go", cookie: true, want: 404},
		{name: "no other asset types", path: "/assets/index.html", cookie: true, want: 404},
		{name: "no files", path: "/.nexus/state/plan.json", cookie: true, want: 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.method
			if m == "" {
				m = "GET"
			}
			req, _ := http.NewRequest(m, f.base+tc.path, nil)
			if tc.host != "" {
				req.Host = tc.host
			}
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			if tc.cookie {
				req.Header.Add("Cookie", cookie)
			}
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("%d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			if resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("security headers missing: %v", resp.Header)
			}
			if tc.want == 303 {
				sc := resp.Header.Get("Set-Cookie")
				for _, want := range []string{"nexus_view_" + port + "=" + f.token, "HttpOnly", "SameSite=Strict", "Path=/"} {
					if !strings.Contains(sc, want) {
						t.Errorf("Set-Cookie %q lacks %q", sc, want)
					}
				}
				if loc := resp.Header.Get("Location"); loc != "/" {
					t.Errorf("redirect to %q, want / (the token leaves the address)", loc)
				}
			}
		})
	}
}

// State text reaches the page as JSON (with <, > and & escaped) and the
// page inserts it as text; the one server-rendered value, the project's
// folder name, goes through html/template.
func TestHostileTextEscaped(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/api/plan", "/api/graph?mode=all", "/api/tasks", "/api/decisions", "/api/summary"} {
		resp, err := f.client.Get(f.base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.ContainsAny(string(b), "<>") {
			t.Errorf("%s sends raw < or >: %s", path, b)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
	}
	var plan sectionAnswer
	f.getJSON("/api/plan", &plan)
	if b, _ := json.Marshal(plan.Data); !strings.Contains(string(b), `\u003cscript\u003ealert(1)\u003c/script\u003e`) {
		t.Errorf("the title should arrive whole, escaped: %s", b)
	}
	// The page itself carries no state text: it is the embedded file, byte
	// for byte, whatever the project is called.
	resp, err := f.client.Get(f.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want, _ := assets.ReadFile("assets/index.html"); string(page) != string(want) || strings.Contains(string(page), "{{") {
		t.Errorf("the page is not the embedded file:\n%s", page)
	}
	// The script never parses state text as HTML.
	js, _ := assets.ReadFile("assets/app.js")
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("} {
		if strings.Contains(string(js), bad) {
			t.Errorf("app.js uses %s", bad)
		}
	}
}

// Hostile state is bounded: a tasks.json over its limit, a plan nested
// 100,000 levels deep and a tracker that is a FIFO each fail their own
// section with a message, and the rest of the page works.
func TestHostileStateBounded(t *testing.T) {
	f := newFixture(t)
	big, err := os.Create(f.layout.TasksPath() + ".tmp")
	if err != nil {
		t.Fatal(err)
	}
	big.Truncate(state.MaxTasksBytes + 1) // sparse: no disk used
	big.Close()
	os.Rename(f.layout.TasksPath()+".tmp", f.layout.TasksPath())
	f.write(f.layout.PlanPath(), `{"id":1,"topic":"t","created_at":"x","issues":[],"x":`+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+`}`)
	other := f.layout
	other.HarnessID = "codex"
	os.MkdirAll(other.HarnessDir(), 0o755)
	if err := mkfifo(other.TrackerPath()); err != nil {
		t.Fatal(err)
	}
	f.srv.dirty(context.Background(), map[string]bool{secTasks: true, secPlan: true, secAgents: true})
	deadline := time.Now().Add(5 * time.Second)
	for {
		var g, p, a sectionAnswer
		f.getJSON("/api/graph", &g)
		f.getJSON("/api/plan", &p)
		f.getJSON("/api/agents", &a)
		ab, _ := json.Marshal(a.Data)
		ok := strings.Contains(g.Error, "limit") && p.Error != "" && strings.Contains(string(ab), `"id":"codex"`) && strings.Contains(string(ab), "regular file")
		if ok {
			if !strings.Contains(string(ab), `"agent_name":"engineer"`) && !strings.Contains(string(ab), `"role":"engineer"`) {
				t.Errorf("the healthy tracker should still show: %s", ab)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("errors not reported: graph %q, plan %q, agents %s", g.Error, p.Error, ab)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var sum summary
	f.getJSON("/api/summary", &sum)
	if sum.Errors[secTasks] == "" || sum.Errors[secPlan] == "" || !sum.Decisions.Enabled {
		t.Errorf("summary: %+v", sum)
	}
}

// A change to tasks.json reaches an open event stream as one "change" for
// the tasks section; a burst of writes is coalesced.
func TestEventsDelivery(t *testing.T) {
	f := newFixture(t)
	req, _ := http.NewRequest("GET", f.base+"/events", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := f.client.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	events := make(chan [2]string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		var name string
		for sc.Scan() {
			line := sc.Text()
			if n, ok := strings.CutPrefix(line, "event: "); ok {
				name = n
			} else if d, ok := strings.CutPrefix(line, "data: "); ok {
				events <- [2]string{name, d}
			}
		}
		close(events)
	}()
	next := func(timeout time.Duration) ([2]string, bool) {
		select {
		case e, ok := <-events:
			return e, ok
		case <-time.After(timeout):
			return [2]string{}, false
		}
	}
	if e, ok := next(5 * time.Second); !ok || e[0] != "hello" {
		t.Fatalf("first event %v", e)
	}
	var before sectionAnswer
	f.getJSON("/api/graph", &before)
	start := time.Now()
	f.write(f.layout.TasksPath(), tasksJSON(`{"id":1,"title":"a","context":"","status":"completed","deps":[]}`, `{"id":9,"title":"new","context":"","status":"pending","deps":[]}`))
	e, ok := next(time.Second)
	took := time.Since(start)
	if !ok || e[0] != "change" || !strings.Contains(e[1], `"section":"tasks"`) {
		t.Fatalf("no change event within 1 s: %v", e)
	}
	t.Logf("tasks.json write → change event: %v", took)
	var after sectionAnswer
	f.getJSON("/api/graph", &after)
	if after.Version <= before.Version {
		t.Errorf("version %d after the change, was %d", after.Version, before.Version)
	}
	if b, _ := json.Marshal(after.Data); !strings.Contains(string(b), `"title":"new"`) {
		t.Errorf("the new task is not in the graph: %s", b)
	}
	// The same content again: no event.
	f.write(f.layout.TasksPath(), tasksJSON(`{"id":1,"title":"a","context":"","status":"completed","deps":[]}`, `{"id":9,"title":"new","context":"","status":"pending","deps":[]}`))
	if e, ok := next(300 * time.Millisecond); ok {
		t.Errorf("an unchanged rewrite sent %v", e)
	}
	// A burst of 30 writes: far fewer events, the last content wins.
	for i := range 30 {
		f.write(f.layout.TasksPath(), tasksJSON(fmt.Sprintf(`{"id":1,"title":"burst %d","context":"","status":"pending","deps":[]}`, i)))
	}
	n := 0
	for {
		if _, ok := next(400 * time.Millisecond); !ok {
			break
		}
		n++
	}
	if n == 0 || n > 10 {
		t.Errorf("%d events for a burst of 30 writes, want 1 to 10", n)
	}
	var last sectionAnswer
	f.getJSON("/api/graph?mode=all", &last)
	if b, _ := json.Marshal(last.Data); !strings.Contains(string(b), `"burst 29"`) {
		t.Errorf("last write missed: %s", b)
	}
	// A harness namespace created later is watched too.
	codex := f.layout
	codex.HarnessID = "codex"
	f.write(codex.TrackerPath(), `[{"harness_id":"codex","agent_name":"reviewer","started_at":"2026-01-01T00:00:00Z"}]`)
	waitEvent(t, next, "agents")
	f.write(codex.TrackerPath(), `[{"harness_id":"codex","agent_name":"reviewer","started_at":"2026-01-01T00:00:00Z","stopped_at":"2026-01-01T00:01:00Z"}]`)
	waitEvent(t, next, "agents")
}

func waitEvent(t *testing.T, next func(time.Duration) ([2]string, bool), section string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		e, ok := next(time.Until(deadline))
		if ok && e[0] == "change" && strings.Contains(e[1], `"section":"`+section+`"`) {
			return
		}
	}
	t.Fatalf("no change event for %s within 2 s", section)
}

// Using the page changes no file: bytes and modification times of every
// file of the project (state, memory, the decision store folder) are the
// same after a session of requests, the check included.
func TestReadOnly(t *testing.T) {
	f := newFixture(t)
	f.write(filepath.Join(f.dir, "store", "decisions", "001-x.md"), "x")
	before := snapshot(t, f.dir)
	for _, p := range []string{"/", "/assets/app.js", "/assets/app.css", "/api/summary", "/api/plan", "/api/history?q=x", "/api/tasks?status=ready",
		"/api/graph?mode=all&q=a", "/api/agents", "/api/decisions?q=2", "/api/memory"} {
		resp, err := f.client.Get(f.base + p)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
	}
	resp, err := f.client.Post(f.base+"/api/decisions/check", "application/json", strings.NewReader(`{"approach":"use sqlite"}`))
	if err != nil {
		t.Fatal(err)
	}
	var ans map[string]string
	json.NewDecoder(resp.Body).Decode(&ans)
	resp.Body.Close()
	if ans["answer"] != "checked: use sqlite" {
		t.Errorf("check answer %v", ans)
	}
	if after := snapshot(t, f.dir); !equalSnap(before, after) {
		t.Errorf("files changed:\nbefore %v\nafter  %v", before, after)
	}
}

type fileState struct {
	data  string
	mtime time.Time
}

func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		st, _ := os.Lstat(p)
		fsx := fileState{mtime: st.ModTime()}
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			fsx.data = string(b)
		}
		out[p] = fsx
		return nil
	})
	return out
}

func equalSnap(a, b map[string]fileState) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.data != w.data || !v.mtime.Equal(w.mtime) {
			return false
		}
	}
	return true
}

func TestMemoryAndDecisionsViews(t *testing.T) {
	f := newFixture(t)
	// Two harnesses read the note: the page merges their logs.
	f.write(f.layout.MemoryAccessPath(), fmt.Sprintf(`{"path":%q,"last_accessed_ts":"2026-01-01T00:00:00Z","access_count":2,"last_agent":"lead"}`+"\n", filepath.Join(f.layout.MemoryDir(), "empirical-a.md")))
	codex := f.layout
	codex.HarnessID = "codex"
	f.write(codex.MemoryAccessPath(), fmt.Sprintf(`{"path":%q,"last_accessed_ts":"2026-02-01T00:00:00Z","access_count":3,"last_agent":"reviewer"}`+"\n", filepath.Join(f.layout.MemoryDir(), "empirical-a.md")))
	f.srv.dirty(context.Background(), map[string]bool{secMemory: true})
	var m struct {
		Version uint64
		Data    memoryData
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.getJSON("/api/memory", &m)
		if len(m.Data.Notes) == 2 && m.Data.Notes[0].Reads == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("memory view: %+v", m.Data)
		}
		time.Sleep(20 * time.Millisecond)
	}
	n := m.Data.Notes[0]
	if n.Category != "empirical" || n.LastAgent != "reviewer" || n.LastAccess != "2026-02-01T00:00:00Z" || !n.Signals.DaysSinceAccess || n.SignalsMet != 1 {
		t.Errorf("note: %+v", n)
	}
	if strings.Join(m.Data.Logs, ",") != "nexus,codex" {
		t.Errorf("logs merged: %v", m.Data.Logs)
	}
	var d struct{ Data decisionPage }
	f.getJSON("/api/decisions?status=superseded", &d)
	if d.Data.Total != 2 || d.Data.Matched != 1 || d.Data.Rows[0].Number != 1 || d.Data.Rows[0].SupersededBy != "2" {
		t.Errorf("decisions: %+v", d.Data)
	}
	f.getJSON("/api/decisions?q=D002", &d)
	if d.Data.Matched != 1 || d.Data.Rows[0].Number != 2 {
		t.Errorf("decisions by number: %+v", d.Data)
	}
	var tp struct{ Data taskPage }
	f.getJSON("/api/tasks?status=ready", &tp)
	if tp.Data.Matched != 1 || tp.Data.Rows[0].ID != 2 || !tp.Data.Rows[0].Ready {
		t.Errorf("ready tasks: %+v", tp.Data)
	}
	var h struct{ Data map[string]any }
	f.getJSON("/api/history?q=anything&n=5", &h)
	if h.Data["total"] != float64(0) {
		t.Errorf("history: %v", h.Data)
	}
}

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }
