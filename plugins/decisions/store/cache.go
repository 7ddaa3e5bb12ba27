package store

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/bm25"
	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
)

// The corpus cache keeps, per decision file, what list, check and search
// need (metadata and check tokens, not the text), keyed by the file's
// identity: device, inode, size, modification time and change time. The
// change time is what catches an in-place edit of the same size whose
// modification time was put back (touch -d, os.Chtimes): no user-space
// call can set it. A change re-reads that one file.
//
// What tells the cache a file changed:
//   - on Linux, an inotify watch on decisions/ (one non-blocking read per
//     call; the kernel queues the event before the writer's call returns,
//     so a check never misses an earlier write). Only the files it names
//     are re-checked, by reading them (a hash of the bytes decides whether
//     to parse), whatever their identity says: two writes within one
//     timestamp tick can leave it unchanged. An overflow re-checks all.
//   - decision files that are symlinks (within the store) are re-checked
//     on every call: the watch does not see edits through the target.
//   - without inotify: the folder's modification time on every call (a
//     file added, removed or renamed) and a full pass over the files'
//     identities at most every fullCheckInterval (files edited in place).
//
// A persistent index (index.go) carries the same records between
// processes, so a cold CLI run or plugin start re-reads only files whose
// identity changed.
type corpusCache struct {
	files    map[string]*fileRecord
	vocab    *bm25.Vocab     // the term ids of every record's Doc
	symlinks map[string]bool // decision files that are symlinks (re-checked every call)
	current  *kernel.Corpus
	watch    *dirWatch
	noWatch  bool     // tests: the path of platforms without inotify
	dirID    [2]int64 // decisions/'s modification and change times
	lastFull time.Time
	loaded   bool // the persistent index was consulted
	// racyBefore: a file changed at or after this time (when the index was
	// written or the last full pass began, less a margin for coarse
	// clocks) may have been rewritten within one timestamp tick with the
	// same size, so its identity alone does not prove it unchanged: it is
	// re-hashed.
	racyBefore int64
	dirty      bool // records changed since the index was written
}

// fullCheckInterval bounds how long the folder's times alone vouch for the
// cache when there is no inotify watch (a variable for tests).
var fullCheckInterval = 2 * time.Second

// fileID identifies one version of a file.
type fileID struct {
	dev, ino           uint64
	size, mtime, ctime int64
	symlink            bool
}

func idOf(info fs.FileInfo, symlink bool) fileID {
	dev, ino, ctime := statID(info)
	return fileID{dev: dev, ino: ino, size: info.Size(), mtime: info.ModTime().UnixNano(), ctime: ctime, symlink: symlink}
}

// changed is the later of the modification and change times.
func (id fileID) changed() int64 { return max(id.mtime, id.ctime) }

// fileRecord is what the cache keeps of one decision file: the parsed
// metadata and tokens, or why it cannot be read.
type fileRecord struct {
	id      fileID
	hash    uint64 // FNV-1a of the content
	entry   kernel.Entry
	problem string
}

func (c *corpusCache) close() {
	if c.watch != nil {
		c.watch.close()
		c.watch = nil
	}
}

// releaseWatch closes the watch; what happened since is unknown, so the
// next call makes a full pass (which watches again).
func (c *corpusCache) releaseWatch() {
	if c.watch != nil {
		c.close()
		c.lastFull = time.Time{}
	}
}

func (c *corpusCache) corpus(f *FS) (*kernel.Corpus, error) {
	if !c.loaded {
		c.loaded = true
		c.vocab = bm25.NewVocab()
		c.files, c.racyBefore = loadIndex(f.root, c.vocab)
	}
	if c.current != nil {
		names, full := c.pending(f)
		if !full {
			changed := false
			for _, n := range names {
				if c.refresh(f, n, !c.symlinks[n]) {
					changed = true
				}
			}
			if !changed {
				return c.current, nil
			}
			// The persistent index is rewritten after full passes only:
			// a later process re-reads just the files changed since.
			c.assemble(f)
			return c.current, nil
		}
	}
	if err := c.fullPass(f); err != nil {
		return nil, err
	}
	c.assemble(f)
	c.save(f)
	return c.current, nil
}

// pending returns the names to re-check, or full when every file must be.
func (c *corpusCache) pending(f *FS) (names []string, full bool) {
	if c.watch != nil {
		changed, all, broken := c.watch.changes()
		if broken {
			c.watch.close()
			c.watch = nil
		}
		if all || broken {
			return nil, true
		}
		names = changed
	} else {
		st, err := f.r.Stat(kernel.DecisionsDir)
		if err != nil || dirTimes(st) != c.dirID || time.Since(c.lastFull) >= fullCheckInterval {
			return nil, true
		}
	}
	for n := range c.symlinks {
		names = append(names, n)
	}
	return names, false
}

// refresh re-checks one file by name and reports whether its record
// changed (added, removed or replaced). reported: the watch named the file,
// so it is read even when its identity is unchanged (the content hash
// decides whether anything did).
func (c *corpusCache) refresh(f *FS, name string, reported bool) bool {
	old := c.files[name]
	id, err := statDecision(f, name)
	if errors.Is(err, fs.ErrNotExist) {
		if old == nil {
			return false
		}
		delete(c.files, name)
		c.dirty = true
		return true
	}
	if !reported && old != nil && err == nil && old.id == id && old.problem == "" {
		return false
	}
	rec := c.read(f, name, id, err, old)
	if old != nil && rec.id == old.id && rec.problem == old.problem && (rec.problem != "" || rec.hash == old.hash) {
		return false // the same bytes, or unreadable for the same reason: nothing to rebuild
	}
	c.files[name] = rec
	c.dirty = true
	return true
}

// fullPass lists decisions/ and re-checks every file's identity.
func (c *corpusCache) fullPass(f *FS) error {
	if c.watch == nil && !c.noWatch {
		// decisions/ may exist now; a watch set up before the listing
		// catches every later change.
		if w, err := newDirWatch(f.root + "/" + kernel.DecisionsDir); err == nil {
			c.watch = w
		}
	}
	c.lastFull = time.Now()
	// Files changed from here on may keep their identity through the next
	// pass (coarse timestamps): that pass re-hashes them.
	defer func(start int64) { c.racyBefore = start - int64(racyMargin) }(c.lastFull.UnixNano())
	if st, err := f.r.Stat(kernel.DecisionsDir); err == nil {
		c.dirID = dirTimes(st)
	}
	ents, err := readDirIn(f.r, kernel.DecisionsDir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("list decisions: %w", f.explain(kernel.DecisionsDir, err))
		}
		c.files = map[string]*fileRecord{}
		return nil
	}
	if c.files == nil {
		c.files = map[string]*fileRecord{}
	}
	seen := make(map[string]bool, len(ents))
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".md") || e.IsDir() {
			continue
		}
		seen[n] = true
		old := c.files[n]
		var id fileID
		info, err := e.Info() // lstat of the folder the root opened
		switch {
		case err != nil:
		case info.Mode()&fs.ModeSymlink != 0 || !info.Mode().IsRegular():
			id, err = statDecision(f, n) // followed only inside the store
		default:
			id = idOf(info, false)
		}
		if errors.Is(err, fs.ErrNotExist) {
			delete(seen, n) // removed while listing
			continue
		}
		if old != nil && err == nil && old.id == id && old.problem == "" && old.id.changed() < c.racyBefore {
			continue
		}
		c.files[n] = c.read(f, n, id, err, old)
		c.dirty = true
	}
	for n := range c.files {
		if !seen[n] {
			delete(c.files, n)
			c.dirty = true
		}
	}
	return nil
}

// statDecision returns a decision file's identity; a symlink is followed
// only while it stays in the store.
func statDecision(f *FS, name string) (fileID, error) {
	rel := kernel.DecisionsDir + "/" + name
	info, err := f.r.Lstat(rel)
	if err != nil {
		return fileID{}, err
	}
	link := info.Mode()&fs.ModeSymlink != 0
	if link {
		if info, err = f.r.Stat(rel); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fileID{symlink: true}, fmt.Errorf("the symlink's target does not exist")
			}
			return fileID{symlink: true}, f.explain(rel, err)
		}
	}
	if !info.Mode().IsRegular() {
		return fileID{symlink: link}, fmt.Errorf("not a regular file")
	}
	return idOf(info, link), nil
}

// dirTimes are a folder's modification and change times: an entry added,
// removed or renamed sets both, and the change time cannot be set back.
func dirTimes(info fs.FileInfo) [2]int64 {
	_, _, ctime := statID(info)
	return [2]int64{info.ModTime().UnixNano(), ctime}
}

// read parses one file into a record. old (if any) is reused when the
// content hash shows the file did not really change.
func (c *corpusCache) read(f *FS, name string, id fileID, statErr error, old *fileRecord) *fileRecord {
	stem := strings.TrimSuffix(name, ".md")
	rec := &fileRecord{id: id, entry: kernel.Entry{Stem: stem}}
	if statErr != nil {
		rec.problem = statErr.Error()
		return rec
	}
	b, err := readIn(f.r, kernel.DecisionsDir+"/"+name, maxDecisionFile)
	if err != nil {
		rec.problem = f.explain(kernel.DecisionsDir+"/"+name, err).Error()
		return rec
	}
	h := fnv.New64a()
	h.Write(b)
	rec.hash = h.Sum64()
	if old != nil && old.problem == "" && old.hash == rec.hash && old.entry.D != nil {
		rec.entry = old.entry
		return rec
	}
	d, err := decision.Parse(string(b), name)
	if err != nil {
		rec.problem = err.Error()
		return rec
	}
	rec.entry.Doc, rec.entry.UseCount = kernel.CheckDoc(c.vocab, d)
	rec.entry.D = slim(d)
	return rec
}

// slim keeps what list, check and the propose screen read; the text is
// read back from the file when a tool shows it (Corpus.Full).
func slim(d *decision.Decision) *decision.Decision {
	return &decision.Decision{
		Date: d.Date, Version: d.Version, Status: intern(decision.Statuses, d.Status), Confidence: intern(decision.Confidences, d.Confidence),
		DecisionType: intern(decision.DecisionTypes, d.DecisionType), Reversibility: intern(decision.Reversibility, d.Reversibility),
		Source: intern(decision.Sources, d.Source), Supersedes: d.Supersedes, SupersededBy: d.SupersededBy, Num: d.Num,
		Title: strings.Clone(d.Title),
	}
}

// intern returns the set's own copy of an enum value, so 100,000 cached
// decisions do not each keep the parser's string.
func intern(set []string, v string) string {
	for _, s := range set {
		if s == v {
			return s
		}
	}
	return v
}

// assemble builds the corpus from the records, in list order.
func (c *corpusCache) assemble(f *FS) {
	names := make([]string, 0, len(c.files))
	for n := range c.files {
		names = append(names, n)
	}
	sort.Strings(names)
	k := &kernel.Corpus{Stems: make([]string, len(names)), Entries: make([]kernel.Entry, 0, len(names)), Vocab: c.vocab}
	c.symlinks = map[string]bool{}
	for i, n := range names {
		r := c.files[n]
		if r.id.symlink {
			c.symlinks[n] = true
		}
		k.Stems[i] = r.entry.Stem
		if r.problem != "" {
			k.Problems = append(k.Problems, kernel.Problem{File: kernel.DecisionsDir + "/" + n, Reason: r.problem})
			continue
		}
		k.Entries = append(k.Entries, r.entry)
	}
	k.Load = func(stem string) (*decision.Decision, error) {
		rel := kernel.DecisionsDir + "/" + stem + ".md"
		text, ok, err := f.ReadFile(rel)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s disappeared; call again", rel)
		}
		return decision.Parse(text, stem+".md")
	}
	c.current = k
}

func (c *corpusCache) save(f *FS) {
	if !c.dirty {
		return
	}
	c.dirty = false
	saveIndex(f.root, c.files, c.vocab)
}
