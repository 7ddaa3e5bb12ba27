package memory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFileName(t *testing.T) {
	p := newProject(t, Options{}, time.Time{})
	for _, c := range []struct {
		cat, topic string
		want       string // "" = refused
		reason     string // part of the refusal
	}{
		{"empirical", "SQLite lock timeouts", "empirical-sqlite-lock-timeouts.md", ""},
		{"external", "GitHub API rate-limit", "external-github-api-rate-limit.md", ""},
		{"pattern", "pattern: release checklist", "pattern-release-checklist.md", ""},
		{"pattern", "  go   vet_first ", "pattern-go-vet-first.md", ""},
		{"external", "ipv6 http2 quirks", "external-ipv6-http2-quirks.md", ""},
		{"empirical", "runner's cache misses", "empirical-runners-cache-misses.md", ""},
		{"empirical", "flaky", "", "has 1 word"},
		{"empirical", "one two three four five", "", "has 5 word"},
		{"empirical", "release notes 2026-04-16", "", "date or version"},
		{"external", "node 20 quirks", "", "date or version"},
		{"external", "api v2 changes", "", "date or version"},
		{"external", "library 0.10 breakage", "", "date or version"},
		{"empirical", "캐시 동작 관찰", "", "outside a-z"},
		{"empirical", "café timings", "", "outside a-z"},
		{"lesson", "some topic", "", "unknown memory category"},
	} {
		got, err := p.m.FileName(c.cat, c.topic)
		if c.want != "" {
			if err != nil || got != c.want {
				t.Errorf("FileName(%q, %q) = %q, %v; want %q", c.cat, c.topic, got, err, c.want)
			}
			continue
		}
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("FileName(%q, %q) = %q, %v; want a refusal mentioning %q", c.cat, c.topic, got, err, c.reason)
		}
	}
}

func TestSaveMergeBeforeCreate(t *testing.T) {
	now := time.Date(2026, 4, 16, 9, 0, 0, 0, time.UTC)
	p := newProject(t, Options{}, now)
	ctx := context.Background()
	existing := "# SQLite Lock Contention\n\nWith 8 writer processes in WAL mode, writers hit SQLITE_BUSY within seconds.\n\n## Setup\n\nbusy_timeout unset, journal_mode WAL.\n"
	p.write("empirical-sqlite-lock-contention.md", existing)
	p.write("empirical-ci-runner-memory.md", "# CI Runner Memory\n\nThe runner has 7 GB; the race build needs 5 GB.\n")
	// same words, other category: must never be the merge target
	p.write("external-sqlite-lock-timeouts.md", "# SQLite Lock Timeouts\n\nThe docs say busy_timeout retries for the given milliseconds.\n")

	// Overlapping: extends the existing empirical file.
	res, err := p.m.Save(ctx, "empirical", "sqlite lock timeouts", "Setting busy_timeout to 5000 ms removed SQLITE_BUSY for 8 writer processes in WAL mode.")
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != "extended" || res.File != "empirical-sqlite-lock-contention.md" || res.Score < res.Threshold {
		t.Fatalf("overlapping save: %+v", res)
	}
	if !strings.Contains(res.Message, "empirical-sqlite-lock-contention.md") || !strings.Contains(res.Message, "score") {
		t.Fatalf("message does not say which file and why: %q", res.Message)
	}
	got := readFile(t, p.mem("empirical-sqlite-lock-contention.md"))
	wantTail := "\n## 2026-04-16: Sqlite Lock Timeouts\n\nSetting busy_timeout to 5000 ms removed SQLITE_BUSY for 8 writer processes in WAL mode.\n"
	if !strings.HasPrefix(got, existing) || !strings.HasSuffix(got, wantTail) {
		t.Fatalf("extended file:\n%s", got)
	}
	if _, err := os.Stat(p.mem("empirical-sqlite-lock-timeouts.md")); err == nil {
		t.Fatal("a near-duplicate file was created")
	}

	// A new topic: creates a new file.
	res, err = p.m.Save(ctx, "empirical", "docker layer caching", "Reordering the Dockerfile so go.mod is copied first cut image builds from 4 minutes to 40 seconds.")
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != "created" || res.File != "empirical-docker-layer-caching.md" || res.Score >= res.Threshold {
		t.Fatalf("new-topic save: %+v", res)
	}
	if got := readFile(t, res.Path); got != "# Docker Layer Caching\n\nReordering the Dockerfile so go.mod is copied first cut image builds from 4 minutes to 40 seconds.\n" {
		t.Fatalf("created file:\n%s", got)
	}

	// The first save in a category with no files creates.
	res, err = p.m.Save(ctx, "pattern", "release checklist steps", "Tag, then build, then publish.")
	if err != nil || res.Action != "created" || res.BestMatch != "" {
		t.Fatalf("first pattern save: %+v, %v", res, err)
	}
	// The exact same name extends, whatever the score.
	res, err = p.m.Save(ctx, "pattern", "release checklist steps", "Announce last.")
	if err != nil || res.Action != "extended" || res.File != "pattern-release-checklist-steps.md" {
		t.Fatalf("same-name save: %+v, %v", res, err)
	}
}

// The threshold is configuration: at 0.99 the overlapping save creates.
func TestSaveThresholdConfigurable(t *testing.T) {
	p := newProject(t, Options{MergeThreshold: 0.99}, time.Time{})
	p.write("empirical-sqlite-lock-contention.md", "# SQLite Lock Contention\n\nwriters hit SQLITE_BUSY\n")
	res, err := p.m.Save(context.Background(), "empirical", "sqlite lock timeouts", "busy_timeout fixes SQLITE_BUSY for writers")
	if err != nil || res.Action != "created" || res.Threshold != 0.99 {
		t.Fatalf("%+v, %v", res, err)
	}
}

func TestSaveRefusals(t *testing.T) {
	p := newProject(t, Options{}, time.Time{})
	ctx := context.Background()
	for _, c := range []struct{ cat, topic, content, want string }{
		{"empirical", "a b", "  \n ", "content is empty"},
		{"empirical", "release 2026", "x", "date or version"},
		{"nope", "a b", "x", "unknown memory category"},
		{"empirical", "big thing", strings.Repeat("x", MaxContentBytes+1), "at most"},
	} {
		_, err := p.m.Save(ctx, c.cat, c.topic, c.content)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Save(%q, %q) = %v; want an InputError with %q", c.cat, c.topic, err, c.want)
		}
	}
	if entries, _ := os.ReadDir(p.m.Dir()); len(entries) != 0 {
		t.Fatalf("refused saves wrote files: %v", entries)
	}
}

func TestSimilarityIsDeterministicAndBounded(t *testing.T) {
	topic := wordSet("sqlite lock timeouts")
	cand := wordSet("sqlite lock timeouts", "busy_timeout avoids SQLITE_BUSY")
	f := wordsOfFile("sqlite-lock-timeouts", "# SQLite Lock Timeouts\n\nbusy_timeout avoids SQLITE_BUSY\n")
	if s := similarity(topic, cand, f); s < 0.999 || s > 1.0001 {
		t.Fatalf("identical candidate scores %v, want 1", s)
	}
	g := wordsOfFile("docker-layer-caching", "# Docker Layer Caching\n\ncopy go.mod first\n")
	if s := similarity(topic, cand, g); s != 0 {
		t.Fatalf("unrelated candidate scores %v, want 0", s)
	}
	for i := 0; i < 20; i++ {
		if similarity(topic, cand, f) != similarity(topic, cand, f) {
			t.Fatal("not deterministic")
		}
	}
}

func TestSaveFromTag(t *testing.T) {
	now := time.Date(2026, 4, 16, 9, 0, 0, 0, time.UTC)
	p := newProject(t, Options{}, now)
	ctx := context.Background()
	for _, c := range []struct {
		text string
		file string // saved file; "" = nexus asks Lead
		ask  string // part of the request to Lead
	}{
		{"The GitHub API rate limit is 5000 requests per hour for authenticated tokens.", "external-github-api-rate.md", ""},
		{"Measured: sqlite busy_timeout of 5s removes SQLITE_BUSY with 8 writers.", "empirical-sqlite-busy-timeout.md", ""},
		{"Always run go vet before committing; the CI rejects it otherwise.", "pattern-go-vet-committing.md", ""},
		{"pattern: squash fixups before review", "pattern-squash-fixups-review.md", ""},
		{"empirical: the flaky test is the tmpfs one", "empirical-flaky-test-tmpfs.md", ""},
		// a tie between categories: ask
		{"Upstream docs say to always run migrations.", "", "category"},
		// no cue at all: ask
		{"Kevin owns the billing module.", "", "category"},
		// not ASCII: no topic
		{"empirical: 캐시가 예상보다 느리다", "", "topic"},
		{"", "", "needs the lesson"},
	} {
		msg, err := p.m.SaveFromTag(ctx, c.text)
		if err != nil {
			t.Fatalf("SaveFromTag(%q): %v", c.text, err)
		}
		if c.file != "" {
			if !strings.Contains(msg, c.file) {
				t.Errorf("SaveFromTag(%q) = %q, want a save to %s", c.text, msg, c.file)
			} else if _, err := os.Stat(p.mem(c.file)); err != nil {
				t.Errorf("SaveFromTag(%q): %s not written", c.text, c.file)
			}
			continue
		}
		if !strings.Contains(msg, "nx_memory_save") && c.ask != "needs the lesson" || !strings.Contains(msg, c.ask) {
			t.Errorf("SaveFromTag(%q) = %q, want a request to Lead about the %s", c.text, msg, c.ask)
		}
	}
	// Derivation is deterministic: the same text extends the same file.
	msg, err := p.m.SaveFromTag(ctx, "The GitHub API rate limit is 5000 requests per hour for authenticated tokens.")
	if err != nil || !strings.Contains(msg, "external-github-api-rate.md") || !strings.Contains(msg, "extended") {
		t.Fatalf("repeat save: %q, %v", msg, err)
	}
}

// Issue 13.1: a repository that ships .nexus/memory as a symlink out of the
// project gets no write through it; the refusal names the link.
func TestSaveRefusesSymlinkedMemoryFolder(t *testing.T) {
	p := newProject(t, Options{}, time.Time{})
	out := t.TempDir()
	mem := filepath.Join(p.dir, ".nexus", "memory")
	if err := os.RemoveAll(mem); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, mem); err != nil {
		t.Fatal(err)
	}
	_, err := p.m.Save(context.Background(), "empirical", "symlink escape test", "hi\n")
	if err == nil || !strings.Contains(err.Error(), mem) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("Save = %v, want a refusal naming %s", err, mem)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("written outside the project: %v", entries)
	}
}

// The content limit at its boundary: MaxContentBytes is accepted, one byte
// more refused.
func TestSaveContentLimitBoundary(t *testing.T) {
	p := newProject(t, Options{}, time.Time{})
	ctx := context.Background()
	if _, err := p.m.Save(ctx, "empirical", "limit exact size", strings.Repeat("x", MaxContentBytes)); err != nil {
		t.Fatalf("content of exactly %d bytes: %v", MaxContentBytes, err)
	}
	if _, err := p.m.Save(ctx, "empirical", "limit over size", strings.Repeat("x", MaxContentBytes+1)); err == nil {
		t.Fatalf("content of %d bytes accepted", MaxContentBytes+1)
	}
}

func TestCategoryOf(t *testing.T) {
	p := newProject(t, Options{}, time.Now())
	for file, want := range map[string]string{
		"empirical-cache-hits.md":    "empirical",
		"sub/external-api-limits.md": "external",
		"pattern-retry-loop.md":      "pattern",
		"notes.md":                   "",
		"empirical":                  "",
	} {
		if got := p.m.CategoryOf(file); got != want {
			t.Errorf("CategoryOf(%q) = %q, want %q", file, got, want)
		}
	}
}
