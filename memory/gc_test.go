package memory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/state"
)

// autoGC turns automatic deletion on with all three thresholds.
var autoGC = Options{GC: GCPolicy{Auto: true, MinDaysSinceAccess: intp(30), MinCyclesSinceAccess: intp(3), MaxAccessCount: intp(1)}}

func intp(n int) *int { return &n }

var day = 24 * time.Hour

// tenFiles builds the scenario in p: ten memory files whose access
// records (or first commits) make exactly three meet all three signals,
// one meet two and one meet only one. With git, the files are committed:
// eight of them 90 days ago, two yesterday. It returns the names of the
// three expected to go.
func tenFiles(t *testing.T, p *project, withGit bool) []string {
	t.Helper()
	now := p.now
	p.setHistory(now.Add(-100*day), now.Add(-50*day), now.Add(-40*day), now.Add(-20*day), now.Add(-10*day), now.Add(-5*day))
	files := map[string]string{
		"empirical-alpha-old-read.md":  "# Alpha\n\nread 60 days ago, once\n",
		"external-beta-old-read.md":    "# Beta\n\nread 45 days ago, once\n",
		"pattern-gamma-never-read.md":  "# Gamma\n\nnever read; committed 90 days ago\n",
		"empirical-delta-busy-file.md": "# Delta\n\nread 35 days ago, five times\n",
		"pattern-epsilon-new-file.md":  "# Epsilon\n\nnever read; committed yesterday\n",
	}
	for i := 1; i <= 5; i++ {
		files["external-live-file-"+string(rune('0'+i))+".md"] = "# Live\n\nread yesterday, ten times\n"
	}
	for name, content := range files {
		if name == "pattern-epsilon-new-file.md" && withGit {
			continue
		}
		p.write(name, content)
	}
	if withGit {
		git(t, p.dir, nil, "init", "-q")
		writeFile(t, filepath.Join(p.dir, "README.md"), "readme\n")
		writeFile(t, filepath.Join(p.dir, "src", "app.go"), "package app\n")
		writeFile(t, filepath.Join(p.dir, ".nexus", ".gitignore"), "state/\n")
		git(t, p.dir, nil, "add", "-A")
		commitAt(t, p.dir, now.Add(-90*day), "initial")
		p.write("pattern-epsilon-new-file.md", files["pattern-epsilon-new-file.md"])
		git(t, p.dir, nil, "add", "-A")
		commitAt(t, p.dir, now.Add(-1*day), "epsilon")
	} else {
		// Outside git, never-read files age from their mtime.
		old := now.Add(-90 * day)
		if err := os.Chtimes(p.mem("pattern-gamma-never-read.md"), old, old); err != nil {
			t.Fatal(err)
		}
		recent := now.Add(-1 * day)
		if err := os.Chtimes(p.mem("pattern-epsilon-new-file.md"), recent, recent); err != nil {
			t.Fatal(err)
		}
	}
	rec := func(name string, ago time.Duration, count int64) state.MemoryAccess {
		return state.MemoryAccess{Path: p.mem(name), LastAccessedTS: state.Format(now.Add(-ago)), AccessCount: count, LastAgent: "researcher"}
	}
	recs := []state.MemoryAccess{
		rec("empirical-alpha-old-read.md", 60*day, 1),
		rec("external-beta-old-read.md", 45*day, 1),
		rec("empirical-delta-busy-file.md", 35*day, 5),
	}
	for i := 1; i <= 5; i++ {
		recs = append(recs, rec("external-live-file-"+string(rune('0'+i))+".md", 1*day, 10))
	}
	p.setRecords(recs...)
	return []string{"empirical-alpha-old-read.md", "external-beta-old-read.md", "pattern-gamma-never-read.md"}
}

func TestReportSignals(t *testing.T) {
	root := t.TempDir()
	isolateGit(t, root)
	now := time.Now().UTC().Truncate(time.Millisecond)
	p := newProjectAt(t, root, autoGC, now)
	want := tenFiles(t, p, true)

	rep, err := p.m.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 10 {
		t.Fatalf("%d files in the report", len(rep.Files))
	}
	if !reflect.DeepEqual(rep.Eligible, want) {
		t.Fatalf("eligible = %v, want %v", rep.Eligible, want)
	}
	by := map[string]FileReport{}
	for _, f := range rep.Files {
		by[f.File] = f
	}
	type exp struct {
		ageFrom        string
		days, cycles   int
		count          int64
		met            int
		d, c, n        bool
		lastAccessSeen bool
	}
	for name, e := range map[string]exp{
		"empirical-alpha-old-read.md":  {AgeFromLastAccess, 60, 5, 1, 3, true, true, true, true},
		"external-beta-old-read.md":    {AgeFromLastAccess, 45, 4, 1, 3, true, true, true, true},
		"pattern-gamma-never-read.md":  {AgeFromFirstCommit, 90, 5, 0, 3, true, true, true, false},
		"empirical-delta-busy-file.md": {AgeFromLastAccess, 35, 3, 5, 2, true, true, false, true},
		"pattern-epsilon-new-file.md":  {AgeFromFirstCommit, 1, 0, 0, 1, false, false, true, false},
		"external-live-file-3.md":      {AgeFromLastAccess, 1, 0, 10, 0, false, false, false, true},
	} {
		f := by[name]
		got := exp{f.AgeFrom, f.DaysSinceAccess, f.CyclesSinceAccess, f.AccessCount, f.SignalsMet,
			f.Signals.DaysSinceAccess, f.Signals.CyclesSinceAccess, f.Signals.AccessCount, f.LastAccess != ""}
		if got != e {
			t.Errorf("%s: got %+v, want %+v", name, got, e)
		}
		if f.Size <= 0 {
			t.Errorf("%s: size %d", name, f.Size)
		}
	}
	text := rep.Text()
	for _, s := range []string{"Nothing was deleted", "pattern-gamma-never-read.md", "never (first commit)", "DCN  all three", "DC-", "--N"} {
		if !strings.Contains(text, s) {
			t.Errorf("report text lacks %q:\n%s", s, text)
		}
	}
	// A report deletes nothing.
	if entries, _ := os.ReadDir(p.m.Dir()); len(entries) != 10 {
		t.Fatalf("%d files left after a report", len(entries))
	}
}

func TestAutoGCDeletesExactlyTheThreeInOneCommit(t *testing.T) {
	root := t.TempDir()
	isolateGit(t, root)
	now := time.Now().UTC().Truncate(time.Millisecond)
	p := newProjectAt(t, root, autoGC, now)
	gone := tenFiles(t, p, true)
	ctx := context.Background()

	// The user's work in progress: a staged change, an unstaged change and
	// an untracked file, none of which may enter the commit or change.
	writeFile(t, filepath.Join(p.dir, "src", "app.go"), "package app\n\nfunc Staged() {}\n")
	git(t, p.dir, nil, "add", "src/app.go")
	writeFile(t, filepath.Join(p.dir, "README.md"), "readme, edited but not staged\n")
	writeFile(t, filepath.Join(p.dir, "notes.txt"), "untracked\n")
	statusBefore := git(t, p.dir, nil, "status", "--porcelain")
	stagedBefore := git(t, p.dir, nil, "diff", "--cached")
	unstagedBefore := git(t, p.dir, nil, "diff")
	headBefore := git(t, p.dir, nil, "rev-parse", "HEAD")
	contents := map[string]string{}
	for _, name := range gone {
		contents[name] = readFile(t, p.mem(name))
	}

	msg, err := p.m.AutoGC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	commit := git(t, p.dir, nil, "rev-parse", "HEAD")
	if commit == headBefore {
		t.Fatalf("no commit made; message %q", msg)
	}
	if parent := git(t, p.dir, nil, "rev-parse", "HEAD^"); parent != headBefore {
		t.Fatalf("the gc commit's parent is %s, want the old HEAD %s", parent, headBefore)
	}
	// exactly the three deletions
	changes := strings.Split(git(t, p.dir, nil, "diff-tree", "--no-commit-id", "--name-status", "-r", "HEAD"), "\n")
	var wantChanges []string
	for _, name := range gone {
		wantChanges = append(wantChanges, "D\t.nexus/memory/"+name)
	}
	sort.Strings(changes)
	if !reflect.DeepEqual(changes, wantChanges) {
		t.Fatalf("commit changes %q, want %q", changes, wantChanges)
	}
	body := git(t, p.dir, nil, "log", "-1", "--format=%B")
	for _, name := range gone {
		path := ".nexus/memory/" + name
		if !strings.Contains(body, path+"\n    git checkout "+headBefore+" -- "+path) {
			t.Errorf("commit message lacks %s and its restore command:\n%s", path, body)
		}
		if !strings.Contains(msg, "git checkout "+commit+"^ -- "+path) {
			t.Errorf("gc message lacks the restore command for %s:\n%s", path, msg)
		}
	}
	if !strings.Contains(body, "all three forgetting signals") {
		t.Errorf("commit message lacks the reason:\n%s", body)
	}
	// the deleted files are gone from the tree, the index and the log
	for _, name := range gone {
		if _, err := os.Stat(p.mem(name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still on disk", name)
		}
		if _, ok := p.records()[p.mem(name)]; ok {
			t.Errorf("access record of %s kept", name)
		}
	}
	if n := len(p.records()); n != 6 {
		t.Errorf("%d access records left, want 6", n)
	}
	if out := git(t, p.dir, nil, "ls-files", ".nexus/memory"); strings.Count(out, "\n")+1 != 7 {
		t.Errorf("index holds:\n%s", out)
	}
	// the user's changes are exactly as they were
	if got := git(t, p.dir, nil, "status", "--porcelain"); got != statusBefore {
		t.Errorf("status changed:\nbefore:\n%s\nafter:\n%s", statusBefore, got)
	}
	if got := git(t, p.dir, nil, "diff", "--cached"); got != stagedBefore {
		t.Errorf("staged change altered:\n%s", got)
	}
	if got := git(t, p.dir, nil, "diff"); got != unstagedBefore {
		t.Errorf("unstaged change altered:\n%s", got)
	}
	if got := git(t, p.dir, nil, "show", "HEAD:src/app.go"); got != "package app" {
		t.Errorf("the staged change leaked into the commit: %q", got)
	}
	// every file comes back with the recorded command
	for _, name := range gone {
		git(t, p.dir, nil, "checkout", commit+"^", "--", ".nexus/memory/"+name)
		if got := readFile(t, p.mem(name)); got != contents[name] {
			t.Errorf("restored %s = %q, want %q", name, got, contents[name])
		}
	}
	// A second run finds nothing new to delete (the restored files have no
	// access records but are tracked again only in the index).
	if msg2, err := p.m.AutoGC(ctx); err != nil || strings.Contains(msg2, "Deleted") {
		t.Fatalf("second run: %q, %v", msg2, err)
	}
}

func TestAutoGCOffDoesNothing(t *testing.T) {
	root := t.TempDir()
	isolateGit(t, root)
	now := time.Now().UTC().Truncate(time.Millisecond)
	// thresholds set, auto off (the default): a report, no deletion
	p := newProjectAt(t, root, Options{GC: GCPolicy{MinDaysSinceAccess: autoGC.GC.MinDaysSinceAccess, MinCyclesSinceAccess: autoGC.GC.MinCyclesSinceAccess, MaxAccessCount: autoGC.GC.MaxAccessCount}}, now)
	tenFiles(t, p, true)
	head := git(t, p.dir, nil, "rev-parse", "HEAD")
	msg, err := p.m.AutoGC(context.Background())
	if err != nil || msg != "" {
		t.Fatalf("AutoGC with auto off = %q, %v", msg, err)
	}
	if git(t, p.dir, nil, "rev-parse", "HEAD") != head {
		t.Fatal("a commit was made with automatic gc off")
	}
	if entries, _ := os.ReadDir(p.m.Dir()); len(entries) != 10 {
		t.Fatalf("%d files left", len(entries))
	}
}

func TestGCOutsideGitRefuses(t *testing.T) {
	root := t.TempDir()
	isolateGit(t, root)
	now := time.Now().UTC().Truncate(time.Millisecond)
	p := newProjectAt(t, root, autoGC, now)
	want := tenFiles(t, p, false)
	rep, err := p.m.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// outside git, never-read files age from their mtime
	if !reflect.DeepEqual(rep.Eligible, want) {
		t.Fatalf("eligible = %v, want %v", rep.Eligible, want)
	}
	msg, err := p.m.AutoGC(context.Background())
	if err != nil || !strings.Contains(msg, "not inside a git repository") || !strings.Contains(msg, "deleted nothing") {
		t.Fatalf("AutoGC outside git = %q, %v", msg, err)
	}
	_, err = p.m.Delete(context.Background(), want)
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("Delete outside git = %v, want a refusal", err)
	}
	if entries, _ := os.ReadDir(p.m.Dir()); len(entries) != 10 {
		t.Fatalf("%d files left after a refusal", len(entries))
	}
	if len(p.records()) != 8 {
		t.Fatalf("access records changed: %d", len(p.records()))
	}
}

func TestDeleteRefusals(t *testing.T) {
	root := t.TempDir()
	isolateGit(t, root)
	p := newProjectAt(t, root, Options{}, time.Time{})
	p.write("empirical-clean-file.md", "clean\n")
	p.write("empirical-edited-file.md", "v1\n")
	p.write("empirical-staged-file.md", "v1\n")
	outside := filepath.Join(p.dir, "keep.md")
	writeFile(t, outside, "outside\n")
	if err := os.Symlink(outside, p.mem("link.md")); err != nil {
		t.Fatal(err)
	}
	git(t, p.dir, nil, "init", "-q")
	git(t, p.dir, nil, "add", "-A")
	git(t, p.dir, nil, "commit", "-q", "-m", "init")
	p.write("empirical-edited-file.md", "v2, not committed\n")
	p.write("empirical-staged-file.md", "v2, staged\n")
	git(t, p.dir, nil, "add", ".nexus/memory/empirical-staged-file.md")
	p.write("empirical-untracked-file.md", "new\n")
	head := git(t, p.dir, nil, "rev-parse", "HEAD")
	ctx := context.Background()
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"empirical-edited-file.md"}, "uncommitted changes"},
		{[]string{"empirical-clean-file.md", "empirical-staged-file.md"}, "uncommitted changes"},
		{[]string{"empirical-untracked-file.md"}, "not committed"},
		{[]string{"link.md"}, "symlink"},
		{[]string{"missing.md"}, "no such memory file"},
		{[]string{"../history.json"}, "outside"},
		{[]string{outside}, "outside"},
		{[]string{"/etc/passwd"}, "outside"},
	} {
		_, err := p.m.Delete(ctx, c.names)
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Delete(%q) = %v; want a refusal saying %q", c.names, err, c.want)
		}
	}
	if git(t, p.dir, nil, "rev-parse", "HEAD") != head {
		t.Fatal("a refused deletion made a commit")
	}
	for _, f := range []string{"empirical-clean-file.md", "empirical-edited-file.md", "empirical-staged-file.md", "empirical-untracked-file.md", "link.md"} {
		if _, err := os.Lstat(p.mem(f)); err != nil {
			t.Errorf("%s touched by a refused deletion", f)
		}
	}
	if readFile(t, outside) != "outside\n" {
		t.Fatal("a file outside memory/ changed")
	}

	// A manual delete by every accepted spelling of a name.
	res, err := p.m.Delete(ctx, []string{".nexus/memory/empirical-clean-file.md", p.mem("empirical-clean-file.md"), "empirical-clean-file.md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0].RepoPath != ".nexus/memory/empirical-clean-file.md" || !strings.Contains(res.Reason, "chosen by the user") {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(p.mem("empirical-clean-file.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("file not deleted")
	}
}

// Without git on PATH, deletion refuses and says git is required.
func TestDeleteWithoutGitBinary(t *testing.T) {
	p := newProject(t, Options{}, time.Time{})
	p.write("empirical-a-b.md", "x")
	p.m.git = filepath.Join(t.TempDir(), "no-git-here")
	_, err := p.m.Delete(context.Background(), []string{"empirical-a-b.md"})
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "git is required") {
		t.Fatalf("err = %v", err)
	}
}

// The real task_close tool runs automatic gc through the hook chained onto
// tools.Env.OnTaskClose.
func TestTaskCloseRunsAutoGC(t *testing.T) {
	root := t.TempDir()
	isolateGit(t, root)
	now := time.Now().UTC().Truncate(time.Millisecond)
	p := newProjectAt(t, root, autoGC, now)
	gone := tenFiles(t, p, true)
	var reported string
	p.m.onAutoGC = func(msg string, err error) {
		if err != nil {
			t.Errorf("auto gc: %v", err)
		}
		reported = msg
	}
	// The real task_close tool, with the hook harness.Engine.AttachMemory
	// chains (the harness package imports this one, so not through it).
	env := &tools.Env{Store: p.m.store, Branch: func() string { return "main" }, OnTaskClose: p.m.TaskCloseHook}
	var taskClose *tools.Tool
	for _, tl := range tools.All() {
		if tl.Name == "task_close" {
			taskClose = tl
		}
	}
	writeFile(t, filepath.Join(root, ".nexus", "state", "tasks.json"),
		`{"goal":"g","decisions":[],"tasks":[{"id":1,"title":"t","context":"c","status":"completed","deps":[]}]}`)
	head := git(t, root, nil, "rev-parse", "HEAD")
	if _, err := taskClose.Handle(context.Background(), env, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if git(t, root, nil, "rev-parse", "HEAD^") != head {
		t.Fatal("task_close did not produce one gc commit on top of HEAD")
	}
	for _, name := range gone {
		if !strings.Contains(reported, ".nexus/memory/"+name) {
			t.Errorf("auto gc report lacks %s: %q", name, reported)
		}
	}
	// history.json, changed by task_close, stays an uncommitted change.
	if git(t, root, nil, "diff", "--name-only") != ".nexus/history.json" || git(t, root, nil, "diff", "--cached", "--name-only") != "" {
		t.Fatalf("status after task_close:\n%s", git(t, root, nil, "status", "--porcelain"))
	}
}

// Automatic gc leaves an eligible file with uncommitted edits alone (an
// old memory just extended by an [m] save) and forgets the others.
func TestAutoGCKeepsFilesWithUncommittedEdits(t *testing.T) {
	root := t.TempDir()
	isolateGit(t, root)
	now := time.Now().UTC().Truncate(time.Millisecond)
	p := newProjectAt(t, root, autoGC, now)
	gone := tenFiles(t, p, true)
	edited := p.mem(gone[0])
	writeFile(t, edited, readFile(t, edited)+"\n## Update\n\nnot committed yet\n")
	msg, err := p.m.AutoGC(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "Kept: .nexus/memory/"+gone[0]+" has uncommitted changes") {
		t.Fatalf("message does not say why %s was kept:\n%s", gone[0], msg)
	}
	changes := git(t, p.dir, nil, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD")
	if changes != ".nexus/memory/"+gone[1]+"\n.nexus/memory/"+gone[2] {
		t.Fatalf("commit changes:\n%s", changes)
	}
	if !strings.Contains(readFile(t, edited), "not committed yet") {
		t.Fatal("the edited file changed")
	}
	// Explicitly naming it refuses outright.
	_, err = p.m.Delete(context.Background(), []string{gone[0]})
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("Delete of an edited file = %v", err)
	}
}
