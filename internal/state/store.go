package state

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/nexus-harness/nexus/internal/filelock"
	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/nexus-harness/nexus/schema"
)

// Validator checks a JSON-shaped value against a schema location (see
// package schema). *schema.Set implements it.
type Validator interface {
	Validate(loc string, v any) ([]schema.Problem, error)
}

// Store reads and writes the .nexus tree of one project for one harness.
type Store struct {
	L           Layout
	V           Validator
	LockTimeout time.Duration
	Now         Clock

	cache *fileCache // parsed plan.json, tasks.json and tracker; nil = none

	// dryRun: every write, removal, lock and folder is skipped (DryRun).
	dryRun bool
	// gitignored is set once .nexus/.gitignore is known to exist
	// (prepareWrite).
	gitignored atomic.Bool
}

// DryRun returns a store over the same layout that reads as this one does
// and writes nothing: no file is written, removed, locked or created, and
// every write reports success. `nexus tags explain` runs the very code of
// a user message's hook on it, so what it reports is what the hook would
// do.
func (s *Store) DryRun() *Store {
	return &Store{L: s.L, V: s.V, LockTimeout: s.LockTimeout, Now: s.Now, cache: &fileCache{entries: map[string]*cacheEntry{}}, dryRun: true}
}

// IsDryRun reports whether the store writes nothing (DryRun).
func (s *Store) IsDryRun() bool { return s.dryRun }

// New returns a store. v must not be nil in production: it is what keeps
// invalid content off the disk.
func New(l Layout, v Validator) *Store {
	return &Store{L: l, V: v, Now: time.Now, cache: &fileCache{entries: map[string]*cacheEntry{}}}
}

// Timestamp returns the current time in TimeLayout.
func (s *Store) Timestamp() string {
	now := s.Now
	if now == nil {
		now = time.Now
	}
	return Format(now())
}

// CorruptError reports a state file nexus cannot use. nexus never resets
// such a file silently.
type CorruptError struct {
	Path   string
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s is corrupt (%s); nexus will not overwrite it: fix it by hand, or run `nexus state repair` to move it aside", e.Path, e.Reason)
}

// InvalidWriteError reports content that failed its schema check; nothing
// was written.
type InvalidWriteError struct {
	Path     string
	Problems []schema.Problem
}

func (e *InvalidWriteError) Error() string {
	return fmt.Sprintf("refusing to write %s: the new content does not match its schema: %s", e.Path, schema.Join(e.Problems))
}

// schemaFor maps a state file to its nexus-core schema ("" = none).
func (s *Store) schemaFor(path string) string {
	switch path {
	case s.L.PlanPath():
		return schema.StatePlan
	case s.L.TasksPath():
		return schema.StateTasks
	case s.L.HistoryPath():
		return schema.StateHistory
	case s.L.TrackerPath():
		return schema.StateTracker
	}
	return ""
}

// tolerated drops the schema complaints nexus-core itself mandates:
//   - members the 0.10 schemas do not declare: readers MUST NOT reject
//     optional fields a later minor (or another harness) added, and nexus
//     keeps them on rewrite (state.Extra) rather than dropping data. nexus
//     never invents members, so an unknown one always came from the file;
//   - tasks.json's goal "" (digest C7: task_add MUST initialise goal to ""
//     although the schema says minLength 1).
func (s *Store) tolerated(path string, v any, ps []schema.Problem) []schema.Problem {
	emptyGoal := false
	if path == s.L.TasksPath() {
		m, _ := v.(map[string]any)
		g, ok := m["goal"].(string)
		emptyGoal = ok && g == ""
	}
	out := ps[:0]
	for _, p := range ps {
		if p.Kind == schema.KindAdditionalProperties || (emptyGoal && p.Pointer == "/goal") {
			continue
		}
		out = append(out, p)
	}
	return out
}

func (s *Store) check(path, loc string, data []byte) ([]schema.Problem, error) {
	if s.V == nil || loc == "" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return []schema.Problem{{Message: "not JSON: " + err.Error()}}, nil
	}
	ps, err := s.V.Validate(loc, v)
	if err != nil {
		return nil, err
	}
	return s.tolerated(path, v, ps), nil
}

// Reads decode a file once into its typed value and do not check it
// against its schema: the schema guards what nexus writes (see commit),
// and CheckFile checks a file whole (nexus state repair, nexus doctor).
// plan.json, tasks.json and the tracker are cached per file version (see
// cache.go); the values returned are shared and must not be modified.

func decodeAs[T any](b []byte) (any, error) {
	v := new(T)
	if err := Decode(b, v); err != nil {
		return nil, err
	}
	return v, nil
}

func (s *Store) decoderFor(path string) func([]byte) (any, error) {
	switch path {
	case s.L.PlanPath():
		return decodeAs[Plan]
	case s.L.TasksPath():
		return decodeAs[Tasks]
	case s.L.TrackerPath():
		return decodeAs[[]TrackerEntry]
	case s.L.HistoryPath():
		return decodeAs[History]
	}
	return decodeAs[any]
}

// docFor is the item layout of path (nil for files without one).
func (s *Store) docFor(path string) itemDoc {
	switch path {
	case s.L.PlanPath():
		return planDoc
	case s.L.TasksPath():
		return tasksDoc
	case s.L.TrackerPath():
		return trackerDoc
	}
	return nil
}

// ReadPlan reads plan.json without locking (files are replaced atomically,
// so a reader sees a whole old or whole new file).
func (s *Store) ReadPlan() (*Plan, bool, error) {
	l, ok, err := s.loadCached(s.L.PlanPath(), planDoc)
	if !ok || err != nil {
		return nil, ok, err
	}
	return l.value.(*Plan), true, nil
}

// ReadTasks reads tasks.json without locking.
func (s *Store) ReadTasks() (*Tasks, bool, error) {
	l, ok, err := s.loadCached(s.L.TasksPath(), tasksDoc)
	if !ok || err != nil {
		return nil, ok, err
	}
	return l.value.(*Tasks), true, nil
}

// ReadHistory reads history.json without locking. It is not cached: the
// file grows without bound, and history_search scans its bytes instead.
func (s *Store) ReadHistory() (*History, bool, error) {
	b, ok, err := s.L.readFile(s.L.HistoryPath())
	if err != nil || !ok {
		return nil, ok, err
	}
	var h History
	if err := Decode(b, &h); err != nil {
		return nil, true, &CorruptError{Path: s.L.HistoryPath(), Reason: "not valid JSON: " + err.Error()}
	}
	return &h, true, nil
}

// ReadTracker reads this harness's agent-tracker.json without locking.
func (s *Store) ReadTracker() ([]TrackerEntry, bool, error) {
	l, ok, err := s.loadCached(s.L.TrackerPath(), trackerDoc)
	if !ok || err != nil {
		return nil, ok, err
	}
	return *l.value.(*[]TrackerEntry), true, nil
}

// CheckFile reads one of the JSON state files and checks it whole: it must
// decode into nexus's model and match its schema (history.json only for
// shape: legacy cycles are tolerated, digest C9). A file that does not is a
// *CorruptError; a missing file is (false, nil).
func (s *Store) CheckFile(path string) (bool, error) {
	b, ok, err := s.L.readFile(path)
	if err != nil || !ok {
		return ok, err
	}
	if _, err := s.decoderFor(path)(b); err != nil {
		return true, &CorruptError{Path: path, Reason: "not valid JSON: " + err.Error()}
	}
	loc := s.schemaFor(path)
	if path == s.L.HistoryPath() {
		loc = ""
	}
	ps, err := s.check(path, loc, b)
	if err != nil {
		return true, err
	}
	if len(ps) > 0 {
		return true, &CorruptError{Path: path, Reason: "does not match its schema: " + schema.Join(ps)}
	}
	return true, nil
}

// Exists reports whether a file exists (no parsing).
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Tx is one locked read-modify-write over a set of state files.
type Tx struct {
	s      *Store
	locked map[string]bool
	writes map[string][]byte // nil value = delete
	order  []string
	// bases are the versions the transaction read (cached, shared);
	// values are the typed values staged, so commit can check only what
	// changed and the cache can keep them.
	bases  map[string]*loaded
	values map[string]any
	// items are what is known of the items of the staged values (their
	// encodings, which are known valid), kept with them in the cache.
	items map[string]*itemSet
	// after run once every staged write is done.
	after []func()
}

// rank orders lock acquisition so concurrent transactions never deadlock.
func (s *Store) rank(path string) int {
	switch path {
	case s.L.HistoryPath():
		return 0
	case s.L.PlanPath():
		return 1
	case s.L.TasksPath():
		return 2
	case s.L.TrackerPath():
		return 3
	}
	return 4
}

// Update locks files (in a fixed global order), runs fn, then validates and
// commits every staged change. If fn fails or any staged content fails its
// schema check, nothing is written.
func (s *Store) Update(ctx context.Context, files []string, fn func(tx *Tx) error) error {
	files = append([]string(nil), files...)
	sort.SliceStable(files, func(i, j int) bool {
		ri, rj := s.rank(files[i]), s.rank(files[j])
		if ri != rj {
			return ri < rj
		}
		return files[i] < files[j]
	})
	tx := &Tx{s: s, locked: map[string]bool{}, writes: map[string][]byte{}, bases: map[string]*loaded{}, values: map[string]any{}, items: map[string]*itemSet{}}
	var held []*filelock.Lock
	defer func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i].Release()
		}
	}()
	for _, f := range files {
		if tx.locked[f] {
			continue
		}
		l, err := s.lockPath(ctx, s.L.LockPath(f))
		if err != nil {
			return err
		}
		held = append(held, l)
		tx.locked[f] = true
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.commit()
}

func (tx *Tx) mustLock(path string) {
	if !tx.locked[path] {
		panic(fmt.Sprintf("state: %s used in a transaction that did not lock it", path))
	}
}

// read returns a locked file's current version (nil when it is missing,
// or when this transaction staged its deletion) and records it as the base
// the transaction's writes are checked against.
func (tx *Tx) read(path string, doc itemDoc) (*loaded, error) {
	tx.mustLock(path)
	if b, staged := tx.writes[path]; staged && b == nil {
		return nil, nil
	}
	l, ok, err := tx.s.loadCached(path, doc)
	if err != nil || !ok {
		return nil, err
	}
	tx.bases[path] = l
	return l, nil
}

// Plan returns a copy of plan.json as of this transaction, free to modify.
func (tx *Tx) Plan() (*Plan, bool, error) {
	l, err := tx.read(tx.s.L.PlanPath(), planDoc)
	if l == nil || err != nil {
		return nil, false, err
	}
	return l.value.(*Plan).clone(), true, nil
}

// Tasks returns a copy of tasks.json as of this transaction, free to
// modify (the tasks are copied; their pointer fields are shared, so replace
// them rather than writing through them).
func (tx *Tx) Tasks() (*Tasks, bool, error) {
	l, err := tx.read(tx.s.L.TasksPath(), tasksDoc)
	if l == nil || err != nil {
		return nil, false, err
	}
	return l.value.(*Tasks).clone(), true, nil
}

// Tracker returns a copy of agent-tracker.json as of this transaction.
func (tx *Tx) Tracker() ([]TrackerEntry, bool, error) {
	l, err := tx.read(tx.s.L.TrackerPath(), trackerDoc)
	if l == nil || err != nil {
		return nil, false, err
	}
	entries := *l.value.(*[]TrackerEntry)
	out := make([]TrackerEntry, len(entries))
	for i, e := range entries {
		e.FilesTouched = slices.Clone(e.FilesTouched)
		e.Extra = cloneExtra(e.Extra)
		out[i] = e
	}
	return out, true, nil
}

func (tx *Tx) stage(path string, v any) error {
	tx.mustLock(path)
	var b []byte
	var err error
	delete(tx.items, path)
	if doc := tx.s.docFor(path); doc != nil {
		var base any
		var baseItems *itemSet
		if l := tx.bases[path]; l != nil {
			base, baseItems = l.value, l.items
		}
		var items *itemSet
		if b, items, err = doc.encode(v, base, baseItems); err == nil {
			tx.items[path] = items
		}
	} else {
		b, err = Encode(v)
	}
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	tx.put(path, b)
	tx.values[path] = v
	return nil
}

// PutPlan stages a new plan.json. p must not be modified afterwards.
func (tx *Tx) PutPlan(p *Plan) error { return tx.stage(tx.s.L.PlanPath(), p) }

// PutTasks stages a new tasks.json. t must not be modified afterwards.
func (tx *Tx) PutTasks(t *Tasks) error { return tx.stage(tx.s.L.TasksPath(), t) }

// PutTracker stages a new agent-tracker.json.
func (tx *Tx) PutTracker(entries []TrackerEntry) error {
	if entries == nil {
		entries = []TrackerEntry{}
	}
	return tx.stage(tx.s.L.TrackerPath(), &entries)
}

// AppendCycle stages history.json with one more cycle. Existing cycles are
// carried over byte for byte; only the new cycle is checked against the
// cycle schema (legacy cycles from other versions are not ours to fix).
// When the file is laid out as nexus writes it, the new cycle is put
// after the last one in the file's bytes (found from the store's history
// mark without parsing the cycles before it, see appendPoint); otherwise
// the file is decoded and re-indented whole, which changes only
// whitespace. Both give Encode's bytes for a file Encode wrote
// (TestAppendCycleSpliceIsEncode).
func (tx *Tx) AppendCycle(c Cycle) (total int, err error) {
	path := tx.s.L.HistoryPath()
	tx.mustLock(path)
	b, ok, err := tx.s.L.readFile(path)
	if err != nil {
		return 0, err
	}
	at, count := -1, 0
	var h *History
	switch {
	case !ok:
		h = &History{SchemaVersion: SchemaVersion}
	default:
		if at, count = appendPoint(b, tx.s.cache.historyMark()); at < 0 {
			h = new(History)
			if err := Decode(b, h); err != nil {
				return 0, &CorruptError{Path: path, Reason: "not valid JSON: " + err.Error()}
			}
			count = len(h.Cycles)
		}
	}
	raw, err := marshalCompact(c)
	if err != nil {
		return 0, fmt.Errorf("encode history cycle: %w", err)
	}
	if tx.s.V != nil {
		var v any
		_ = json.Unmarshal(raw, &v)
		ps, err := tx.s.V.Validate(schema.StateHistory+"#/properties/cycles/items", v)
		if err != nil {
			return 0, err
		}
		ps = tx.s.tolerated(path, v, ps)
		if len(ps) > 0 {
			for i := range ps {
				ps[i].Pointer = fmt.Sprintf("/cycles/%d%s", count, ps[i].Pointer)
			}
			return 0, &InvalidWriteError{Path: path, Problems: ps}
		}
	}
	if h != nil {
		h.Cycles = append(h.Cycles, raw)
		// Re-indenting changes only whitespace: every existing cycle keeps its
		// members, their order, number spellings and escapes.
		out, err := Encode(h)
		if err != nil {
			return 0, err
		}
		tx.put(path, out)
		return len(h.Cycles), nil
	}
	var one bytes.Buffer
	if err := jsonv2.MarshalWrite(&one, &c, indentOpts); err != nil {
		return 0, fmt.Errorf("encode history cycle: %w", err)
	}
	sep := ",\n    "
	if count == 0 {
		sep = "\n    "
	}
	out := make([]byte, 0, len(b)+len(sep)+one.Len()*2+4)
	out = append(append(out, b[:at]...), sep...)
	out = appendIndented(out, bytes.TrimSuffix(one.Bytes(), []byte("\n")), []byte("\n    "))
	end := len(out)
	if count == 0 {
		out = append(out, "\n  "...)
	}
	out = append(out, b[at:]...)
	tx.put(path, out)
	tx.after = append(tx.after, func() { tx.s.markHistory(out, end, count+1) })
	return count + 1, nil
}

// Delete stages the removal of a file: nil content removes it at commit.
func (tx *Tx) Delete(path string) { tx.PutRaw(path, nil) }

// PutRaw stages arbitrary bytes for a locked path (validated at commit when
// the path has a schema).
func (tx *Tx) PutRaw(path string, data []byte) {
	tx.mustLock(path)
	tx.put(path, data)
	delete(tx.values, path)
	delete(tx.items, path)
}

// put stages data as path's content at commit (nil removes the file),
// keeping the order in which paths were first staged.
func (tx *Tx) put(path string, data []byte) {
	if _, ok := tx.writes[path]; !ok {
		tx.order = append(tx.order, path)
	}
	tx.writes[path] = data
}

func (tx *Tx) commit() error {
	// Validate everything before writing anything.
	for _, path := range tx.order {
		b := tx.writes[path]
		if b == nil || path == tx.s.L.HistoryPath() {
			continue
		}
		ps, err := tx.validate(path, b)
		if err != nil {
			return err
		}
		if len(ps) > 0 {
			return &InvalidWriteError{Path: path, Problems: ps}
		}
	}
	// Writes before deletions, history first: a crash between steps can
	// leave a plan both archived and present, never lost.
	order := append([]string(nil), tx.order...)
	sort.SliceStable(order, func(i, j int) bool {
		di, dj := tx.writes[order[i]] == nil, tx.writes[order[j]] == nil
		if di != dj {
			return !di
		}
		return tx.s.rank(order[i]) < tx.s.rank(order[j])
	})
	for _, path := range order {
		b := tx.writes[path]
		if b == nil {
			tx.s.remember(path, nil, nil, nil)
			if err := tx.s.removeFile(path); err != nil {
				return err
			}
			continue
		}
		tx.s.remember(path, nil, nil, nil) // forget the old version first
		if err := tx.s.writeFile(path, b, true); err != nil {
			return err
		}
		if v, ok := tx.values[path]; ok {
			tx.s.remember(path, b, v, tx.items[path])
		}
	}
	for _, f := range tx.after {
		f()
	}
	return nil
}

// validate checks staged content against its schema. A typed plan.json,
// tasks.json or tracker is checked as its items' array emptied plus each
// item not known valid: an item equal to the one at its index in the
// version the transaction read keeps that version's check, and what
// another process changed in that version was never checked, so it is
// checked now. For these schemas that is the whole file's check
// (ItemSplitter says when; TestItemwiseCheckIsWholeCheck shows it on
// random and fuzzed files); any other content is checked whole.
func (tx *Tx) validate(path string, b []byte) ([]schema.Problem, error) {
	s := tx.s
	loc := s.schemaFor(path)
	if s.V == nil || loc == "" {
		return nil, nil
	}
	doc, items := s.docFor(path), tx.items[path]
	v, typed := tx.values[path]
	if doc == nil || items == nil || !typed {
		return s.check(path, loc, b)
	}
	itemLoc, ok := s.itemLocation(loc, doc.arrayMember())
	if !ok {
		return s.check(path, loc, b)
	}
	ps, err := s.checkSplit(path, loc, itemLoc, doc.arrayMember(), items)
	if err != nil {
		return nil, err
	}
	for i := range ps {
		if n, ok := itemIndex(ps[i].Pointer, doc.arrayMember()); ok {
			ps[i].Message += " (" + doc.itemLabel(v, n) + ")"
		}
	}
	return ps, nil
}

// ItemSplitter is implemented by a Validator that can say when a document
// of a schema may be checked as the document with one array emptied plus
// each of its items (*schema.Set does).
type ItemSplitter interface {
	// ItemLocation returns the location items of the array at member of
	// the root object (the root itself when member is "") are checked
	// against, and ok when nothing else in loc's schema looks at them.
	ItemLocation(loc, member string) (itemLoc string, ok bool)
}

func (s *Store) itemLocation(loc, member string) (string, bool) {
	sp, ok := s.V.(ItemSplitter)
	if !ok {
		return "", false
	}
	return sp.ItemLocation(loc, member)
}

// checkSplit checks a staged file given as its items (set) and its shell
// (set.shell: the file with its items' array emptied): the shell against
// loc and each item not marked valid against itemLoc, its problems
// pointing into the array. With no problem every item is marked valid.
func (s *Store) checkSplit(path, loc, itemLoc, member string, set *itemSet) ([]schema.Problem, error) {
	items := set.items
	ps, err := s.check(path, loc, set.shell)
	if err != nil {
		return nil, err
	}
	prefix := "/"
	if member != "" {
		prefix = "/" + member + "/"
	}
	for i := range items {
		if items[i].valid {
			continue
		}
		var v any
		if err := json.Unmarshal(set.raw(i), &v); err != nil {
			return nil, fmt.Errorf("check %s: item %d: %w", path, i, err)
		}
		ips, err := s.V.Validate(itemLoc, v)
		if err != nil {
			return nil, err
		}
		for _, p := range ips {
			if p.Kind == schema.KindAdditionalProperties {
				continue // as tolerated does
			}
			p.Pointer = prefix + strconv.Itoa(i) + p.Pointer
			ps = append(ps, p)
		}
	}
	if len(ps) > 0 {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Pointer < ps[j].Pointer })
		return ps, nil
	}
	for i := range items {
		items[i].valid = true
	}
	return nil, nil
}

// itemIndex returns the index of the item a problem's pointer lies in.
func itemIndex(ptr, member string) (int, bool) {
	rest := ptr
	if member != "" {
		var ok bool
		if rest, ok = strings.CutPrefix(ptr, "/"+member); !ok {
			return 0, false
		}
	}
	rest, ok := strings.CutPrefix(rest, "/")
	if !ok {
		return 0, false
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
}

// AppendLine appends one JSON line to a log file under its lock and
// fsyncs it. A torn final line left by a crash (no trailing newline) is cut
// off first, so the file always parses line by line.
func (s *Store) AppendLine(ctx context.Context, path string, v any) error {
	return s.appendLines(ctx, path, []any{v}, true)
}

// AppendLines is AppendLine for several lines: one lock, one write and one
// fsync for all of them (a hook that logs a line per inline action pays
// one fsync, not one per line).
func (s *Store) AppendLines(ctx context.Context, path string, vs []any) error {
	if len(vs) == 0 {
		return nil
	}
	return s.appendLines(ctx, path, vs, true)
}

// AppendLineNoSync is AppendLine without the fsync: readers and a killed
// process still see whole lines only, but a power loss may lose the latest
// lines. It is for the tool log, appended on every tool call, where an fsync
// (about 1 ms on an ordinary disk) would be most of a hook's cost and a lost
// line costs little.
func (s *Store) AppendLineNoSync(ctx context.Context, path string, v any) error {
	return s.appendLines(ctx, path, []any{v}, false)
}

func (s *Store) appendLines(ctx context.Context, path string, vs []any, durable bool) error {
	if s.dryRun {
		return nil
	}
	var line []byte
	for _, v := range vs {
		b, err := marshalCompact(v)
		if err != nil {
			return fmt.Errorf("encode line for %s: %w", path, err)
		}
		line = append(append(line, b...), '\n')
	}
	l, err := s.lockPath(ctx, filelock.PathFor(path))
	if err != nil {
		return err
	}
	defer l.Release()
	f, err := s.openFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	} else if err := safefile.CheckRegular(path, st); err != nil {
		return err
	} else if limit := LimitFor(path); st.Size() > limit {
		// No reader takes a log over its limit, and finding the end of
		// its last line could mean scanning gigabytes of a sparse file.
		return &safefile.TooLargeError{Path: path, Limit: limit}
	}
	if err := cutTornTail(f); err != nil {
		return fmt.Errorf("repair %s: %w", path, err)
	}
	// One write call: a killed process leaves all the lines or none of them.
	if _, err := f.Write(line); err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", path, err)
		}
	}
	return f.Close()
}

func cutTornTail(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	size := st.Size()
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	// Find the end of the last complete line (the file is within its
	// read limit: the caller checked).
	const chunk = 64 << 10
	end := int64(0)
	buf := make([]byte, chunk)
	for off := size; off > 0; {
		start := max(off-chunk, 0)
		buf := buf[:off-start]
		if _, err := f.ReadAt(buf, start); err != nil {
			return err
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			end = start + int64(i) + 1
			break
		}
		off = start
	}
	return f.Truncate(end)
}

// ReadLines returns the complete JSON lines of a log (a torn tail is
// skipped), read beneath the log's own folder through the limit of its
// kind. A missing file yields nothing.
func ReadLines(path string) ([][]byte, error) {
	b, ok, err := readAt(path)
	if err != nil || !ok {
		return nil, err
	}
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break // torn tail
		}
		if line := bytes.TrimSpace(b[:i]); len(line) > 0 {
			out = append(out, line)
		}
		b = b[i+1:]
	}
	return out, nil
}

// AppendTasksJSON appends MarshalCompact(t.Tasks) to dst (leaving room
// for extra bytes more). When t is the version of tasks.json the store
// holds (ReadTasks), each task's rendering is kept with it and re-used for
// as long as the task's bytes in the file stay the same, in later versions
// too, whoever wrote them: a task list another process changed in one
// task costs one task's rendering and a copy of the rest. The renderings
// kept are parts of the returned bytes: append to them, never modify them.
func (s *Store) AppendTasksJSON(dst []byte, extra int, t *Tasks) ([]byte, error) {
	if e := s.cache.get(s.L.TasksPath()); e != nil && e.value == t && e.items != nil && len(e.items.items) == len(t.Tasks) {
		return e.items.appendCompact(dst, extra, func(i int) ([]byte, error) { return MarshalCompact(&t.Tasks[i]) })
	}
	b, err := MarshalCompact(t.Tasks)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}
