package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyjson"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
)

// Pruning windows (days).
const (
	pruneKeepAllDays = 7
	pruneDailyDays   = 30
	pruneWeeklyDays  = 180
)

// SnapshotSchemaVersion is written into every snapshot.
const SnapshotSchemaVersion = 1

var reSnapshotName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v.*\.json$`) })

// SnapshotMeta describes one snapshot file.
type SnapshotMeta struct {
	File      string
	Version   int
	Timestamp string
	Trigger   string
	Detail    string
	Tokens    int
}

// snapshotFiles lists snapshots/v*.json by file name, newest name first.
func (f *FS) snapshotFiles() ([]string, error) {
	ents, err := f.readDir(kernel.SnapshotsDir)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && reSnapshotName().MatchString(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	return names, nil
}

func (f *FS) loadSnapshot(name string) (*pyjson.Object, error) {
	b, err := readIn(f.r, kernel.SnapshotsDir+"/"+name, maxStoreFile)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w", name, f.explain(kernel.SnapshotsDir+"/"+name, err))
	}
	v, err := pyjson.Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("snapshot %s is not valid JSON: %w", name, err)
	}
	o, ok := v.(*pyjson.Object)
	if !ok {
		return nil, fmt.Errorf("snapshot %s is not a JSON object", name)
	}
	return o, nil
}

func intField(o *pyjson.Object, k string) int {
	v, _ := o.Get(k)
	switch x := v.(type) {
	case int64:
		return int(x)
	case float64:
		return int(x)
	}
	return 0
}

func strField(o *pyjson.Object, k string) string {
	v, _ := o.Get(k)
	s, _ := v.(string)
	return s
}

// ListSnapshots returns snapshot metadata, newest file name first.
func (f *FS) ListSnapshots() ([]SnapshotMeta, error) {
	names, err := f.snapshotFiles()
	if err != nil {
		return nil, err
	}
	out := make([]SnapshotMeta, 0, len(names))
	for _, n := range names {
		o, err := f.loadSnapshot(n)
		if err != nil {
			return nil, err
		}
		out = append(out, SnapshotMeta{File: n, Version: intField(o, "version"), Timestamp: strField(o, "timestamp"),
			Trigger: strField(o, "trigger"), Detail: strField(o, "trigger_detail"), Tokens: intField(o, "token_count")})
	}
	return out, nil
}

// LoadSnapshot reads snapshots/vNNN.json.
func (f *FS) LoadSnapshot(version int) (*pyjson.Object, error) {
	name := fmt.Sprintf("v%03d.json", version)
	if _, err := f.r.Stat(kernel.SnapshotsDir + "/" + name); err != nil {
		//lint:ignore ST1005 Nauro's message, byte for byte
		return nil, fmt.Errorf("Snapshot v%03d not found.", version)
	}
	return f.loadSnapshot(name)
}

// SerializeSnapshot is the snapshot file text (json.dumps(indent=2) + "\n").
func SerializeSnapshot(snap *pyjson.Object) (string, error) {
	files, _ := snap.Get("files")
	if _, ok := files.(*pyjson.Object); !ok {
		return "", fmt.Errorf("snapshot files must be a dict")
	}
	if strField(snap, "timestamp") == "" {
		return "", fmt.Errorf("snapshot timestamp must be a non-empty string")
	}
	if t, _ := snap.Get("trigger"); t != nil {
		if _, ok := t.(string); !ok {
			return "", fmt.Errorf("snapshot trigger must be a string")
		}
	}
	return pyjson.File(snap), nil
}

// Capture writes the next snapshot of the store's markdown and prunes old
// ones, under snapshots/.lock.
func (f *FS) Capture(ctx context.Context, trigger, detail string, now time.Time) (int, error) {
	lock, err := f.lock(ctx, kernel.SnapshotsDir+"/.lock")
	if err != nil {
		return 0, err
	}
	defer lock.Release()
	version := 1
	names, err := f.snapshotFiles()
	if err != nil {
		return 0, err
	}
	if len(names) > 0 {
		latest, err := f.loadSnapshot(names[0])
		if err != nil {
			return 0, err
		}
		version = intField(latest, "version") + 1
	}
	files := pyjson.NewObject()
	tokens := 0
	addDir := func(dir, prefix string) error {
		ents, err := f.readDir(dir)
		if err != nil {
			return err
		}
		var mds []string
		for _, e := range ents {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") {
				mds = append(mds, e.Name())
			}
		}
		sort.Strings(mds)
		for _, n := range mds {
			b, err := readIn(f.r, path.Join(dir, n), maxStoreFile)
			if err != nil {
				return f.explain(path.Join(dir, n), err)
			}
			files.Set(prefix+n, string(b))
			tokens += pytext.Len(string(b))
		}
		return nil
	}
	if err := addDir(".", ""); err != nil {
		return 0, fmt.Errorf("snapshot: %w", err)
	}
	if err := addDir(kernel.DecisionsDir, kernel.DecisionsDir+"/"); err != nil {
		return 0, fmt.Errorf("snapshot: %w", err)
	}
	snap := pyjson.NewObject().Set("schema_version", SnapshotSchemaVersion).Set("version", version).
		Set("timestamp", kernel.IsoTimestamp(now)).Set("trigger", trigger).Set("trigger_detail", detail).
		Set("token_count", tokens/4).Set("files", files)
	text, err := SerializeSnapshot(snap)
	if err != nil {
		return 0, err
	}
	if err := f.writeAtomic(fmt.Sprintf("%s/v%03d.json", kernel.SnapshotsDir, version), []byte(text)); err != nil {
		return 0, err
	}
	return version, f.prune(now)
}

// ParseTimestamp reads an ISO-8601 timestamp as Python's
// datetime.fromisoformat does for the forms Nauro writes. A timestamp
// without an offset is taken as UTC (the reference would crash comparing
// it).
func ParseTimestamp(s string) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02T15:04:05.999999999-07:00", "2006-01-02T15:04:05-07:00",
		"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04-07:00", "2006-01-02 15:04:05.999999999-07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

type pruneItem struct {
	name      string
	version   int
	ts        time.Time
	decisions int
}

// weekOfYear is strftime's %W: Monday-first weeks, days before the first
// Monday in week 00.
func weekOfYear(t time.Time) int {
	yday0 := t.YearDay() - 1
	return (yday0 + 7 - (int(t.Weekday())+6)%7) / 7
}

// prune applies logarithmic retention: everything from the last 7 days,
// then the newest per day (30 days), per week (180 days) and per month,
// always keeping the newest snapshot and every snapshot that added
// decisions (auto-pin).
func (f *FS) prune(now time.Time) error {
	names, err := f.snapshotFiles()
	if err != nil || len(names) <= 1 {
		return err
	}
	var items []pruneItem
	for _, n := range names {
		o, err := f.loadSnapshot(n)
		if err != nil {
			return err
		}
		ts, ok := ParseTimestamp(strField(o, "timestamp"))
		if !ok {
			continue // unreadable timestamps are never deleted
		}
		count := 0
		if files, ok := func() (*pyjson.Object, bool) { v, _ := o.Get("files"); fo, ok := v.(*pyjson.Object); return fo, ok }(); ok {
			for _, k := range files.Keys() {
				if strings.HasPrefix(k, kernel.DecisionsDir+"/") {
					count++
				}
			}
		}
		items = append(items, pruneItem{name: n, version: intField(o, "version"), ts: ts, decisions: count})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].version < items[j].version })
	if len(items) == 0 {
		return nil
	}
	keep := map[string]bool{items[len(items)-1].name: true}
	for i := 1; i < len(items); i++ {
		if items[i].decisions > items[i-1].decisions {
			keep[items[i].name] = true
		}
	}
	type best struct {
		name string
		ts   time.Time
	}
	buckets := map[string]best{}
	var order []string
	for _, it := range items {
		if keep[it.name] {
			continue
		}
		age := now.Sub(it.ts)
		var key string
		switch {
		case age <= pruneKeepAllDays*24*time.Hour:
			keep[it.name] = true
			continue
		case age <= pruneDailyDays*24*time.Hour:
			key = "d" + it.ts.Format("2006-01-02")
		case age <= pruneWeeklyDays*24*time.Hour:
			key = fmt.Sprintf("w%04d-W%02d", it.ts.Year(), weekOfYear(it.ts))
		default:
			key = "m" + it.ts.Format("2006-01")
		}
		if b, ok := buckets[key]; !ok || it.ts.After(b.ts) {
			if !ok {
				order = append(order, key)
			}
			buckets[key] = best{it.name, it.ts}
		}
	}
	for _, k := range order {
		keep[buckets[k].name] = true
	}
	for _, it := range items {
		if !keep[it.name] {
			if err := f.r.Remove(kernel.SnapshotsDir + "/" + it.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("prune snapshot %s: %w", it.name, err)
			}
		}
	}
	return nil
}

// PruneNow runs the retention rules at the given time (used by tests and
// by maintenance commands).
func (f *FS) PruneNow(now time.Time) error { return f.prune(now) }

// readDir lists a store folder beneath the root ("." for the root); a
// missing folder is empty.
func (f *FS) readDir(dir string) ([]fs.DirEntry, error) {
	ents, err := readDirIn(f.r, dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, f.explain(dir, err)
	}
	return ents, nil
}
