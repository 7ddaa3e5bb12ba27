// Package kernel holds the decision-store operations (check, propose,
// lookups, context, questions, state), written against a small Store
// interface so they run the same on the filesystem and in memory, as the
// reference's nauro_core.operations do.
package kernel

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/bm25"
)

// Store files at the project-store root.
const (
	ProjectFile       = "project.md"
	StateCurrentFile  = "state_current.md"
	StateHistoryFile  = "state_history.md"
	StateLegacyFile   = "state.md"
	StackFile         = "stack.md"
	OpenQuestionsFile = "open-questions.md"
	HashesFile        = ".decision-hashes.json"
	DecisionsDir      = "decisions"
	SnapshotsDir      = "snapshots"
)

// Limits on caller-supplied text (code points).
const (
	MaxTitleLength     = 300
	MaxRationaleLength = 10000
	MaxDeltaLength     = 5000
	MaxQuestionLength  = 2000
	MaxContextLength   = 5000
	MaxApproachLength  = 5000
	MinRationaleLength = 20
	CheckTopK          = 5
)

// Store is what the operations need from a project store. Paths are
// store-relative with forward slashes.
type Store interface {
	// ReadFile returns a file's text; ok is false when it does not exist.
	ReadFile(path string) (text string, ok bool, err error)
	// WriteFile replaces a file, creating parent directories; its lock is
	// waited for no longer than ctx allows.
	WriteFile(ctx context.Context, path, text string) error
	// ListDecisions returns the stems of decisions/*.md in code-point order.
	ListDecisions() ([]string, error)
}

// CorpusCache is implemented by stores that keep the parsed decisions (and
// their search indexes) between calls, rebuilding them only when the
// decisions change.
type CorpusCache interface {
	Corpus() (*Corpus, error)
}

// Entry is one parsed decision and its stem. A store that keeps many
// decisions may hand out a slim D (no Content, Body or Rationale) with the
// check document precomputed; Corpus.Full reads the whole decision back.
type Entry struct {
	Stem string
	D    *decision.Decision

	// Doc is the check tokeniser's term counts of Title + " " + Rationale
	// over the corpus's Vocab, and UseCount the number of its words equal
	// to "use" (stop-worded for checks, kept by search). A nil
	// Doc.Counts means "tokenise D".
	Doc      bm25.Doc
	UseCount int
}

// Problem is a decision file that cannot be read or parsed: every reader
// reports it (file, reason) instead of dropping it silently.
type Problem struct {
	File   string // store-relative, e.g. decisions/042-x.md
	Reason string
}

// Corpus is every decision that parses, in list order (the BM25 corpus
// order), with lazily built search indexes.
type Corpus struct {
	Entries  []Entry
	Stems    []string  // every stem, parseable or not
	Problems []Problem // files that could not be read or parsed, in list order

	// Load reads one decision in full (nil: Entries hold full decisions).
	Load func(stem string) (*decision.Decision, error)
	// Vocab is what Entry.Doc term ids refer to (nil: a fresh one).
	Vocab *bm25.Vocab

	vocabOnce sync.Once
	checkOnce sync.Once
	check     *searchIndex
	checkErr  error

	searchMu sync.Mutex
	search   map[bool]*searchIndex
}

// Full returns e's decision with its text, reading it back when the
// corpus keeps only what the check needs.
func (c *Corpus) Full(e Entry) (*decision.Decision, error) {
	if c.Load == nil || e.D.Content != "" {
		return e.D, nil
	}
	return c.Load(e.Stem)
}

type searchIndex struct {
	entries []Entry
	ix      *bm25.Index
	tok     *bm25.Tokenizer
}

var (
	checkTokenizer  = bm25.NewTokenizer(bm25.CheckStopwords)
	searchTokenizer = bm25.NewTokenizer(bm25.StopwordsEN)
)

// CheckDoc returns the check document of a decision over v and how many
// of its words are "use" (what the search tokeniser keeps on top).
func CheckDoc(v *bm25.Vocab, d *decision.Decision) (bm25.Doc, int) {
	text := docText(d)
	n := 0
	for _, w := range bm25.Words(text) {
		if w == "use" {
			n++
		}
	}
	return v.NewDoc(checkTokenizer.Tokens(text)), n
}

// LoadCorpus parses every decision of s. Files that fail to parse are
// reported in Problems.
func LoadCorpus(s Store) (*Corpus, error) {
	stems, err := s.ListDecisions()
	if err != nil {
		return nil, err
	}
	c := &Corpus{Stems: stems}
	for _, stem := range stems {
		file := DecisionsDir + "/" + stem + ".md"
		text, ok, err := s.ReadFile(file)
		if err != nil {
			var pe *ProblemError
			if errors.As(err, &pe) {
				c.Problems = append(c.Problems, Problem{File: file, Reason: pe.Reason})
				continue
			}
			return nil, err
		}
		if !ok {
			c.Problems = append(c.Problems, Problem{File: file, Reason: "the file disappeared while it was read"})
			continue
		}
		d, err := decision.Parse(text, stem+".md")
		if err != nil {
			c.Problems = append(c.Problems, Problem{File: file, Reason: err.Error()})
			continue
		}
		c.Entries = append(c.Entries, Entry{Stem: stem, D: d})
	}
	return c, nil
}

// ProblemError is a store's refusal to read one file (for example a
// symlink whose target leaves the store).
type ProblemError struct {
	File   string
	Reason string
}

func (e *ProblemError) Error() string { return e.File + ": " + e.Reason }

// Decisions returns the store's corpus, cached when the store supports it.
func Decisions(s Store) (*Corpus, error) {
	if cc, ok := s.(CorpusCache); ok {
		return cc.Corpus()
	}
	return LoadCorpus(s)
}

func docText(d *decision.Decision) string { return d.Title + " " + d.Rationale }

func (c *Corpus) buildIndex(entries []Entry, tok *bm25.Tokenizer, withUse bool) (*searchIndex, error) {
	v := c.vocab()
	docs := make([]bm25.Doc, len(entries))
	useID := v.ID("use")
	for i, e := range entries {
		switch {
		case e.Doc.Counts == nil:
			docs[i] = v.NewDoc(tok.Tokens(docText(e.D)))
		case withUse && e.UseCount > 0:
			// The search tokeniser keeps "use" (stem "use"): the same
			// counts plus those, and a longer document.
			d := bm25.Doc{Counts: make([]bm25.TermCount, 0, len(e.Doc.Counts)+1), Len: e.Doc.Len + int32(e.UseCount)}
			found := false
			for _, tc := range e.Doc.Counts {
				if tc.Term == useID {
					tc.N += int32(e.UseCount)
					found = true
				}
				d.Counts = append(d.Counts, tc)
			}
			if !found {
				d.Counts = append(d.Counts, bm25.TermCount{Term: useID, N: int32(e.UseCount)})
			}
			docs[i] = d
		default:
			docs[i] = e.Doc
		}
	}
	ix, err := bm25.BuildDocs(v, docs)
	if err != nil {
		return nil, err
	}
	return &searchIndex{entries: entries, ix: ix, tok: tok}, nil
}

func (c *Corpus) vocab() *bm25.Vocab {
	c.vocabOnce.Do(func() {
		if c.Vocab == nil {
			c.Vocab = bm25.NewVocab()
		}
	})
	return c.Vocab
}

// checkIndex is the index check_decision and the propose Tier 2 screen
// use: active decisions without the scaffold seed, stopwords plus "use".
func (c *Corpus) checkIndex() (*searchIndex, error) {
	c.checkOnce.Do(func() {
		var active []Entry
		for _, e := range c.Entries {
			if e.D.Status == decision.StatusActive && !e.D.IsSeed() {
				active = append(active, e)
			}
		}
		c.check, c.checkErr = c.buildIndex(active, checkTokenizer, false)
	})
	return c.check, c.checkErr
}

// searchIndex is the index of search_decisions: active (or all) decisions,
// seed included, the 33 bm25s stopwords.
func (c *Corpus) searchIndex(includeSuperseded bool) (*searchIndex, error) {
	c.searchMu.Lock()
	defer c.searchMu.Unlock()
	if si, ok := c.search[includeSuperseded]; ok {
		return si, nil
	}
	var cands []Entry
	for _, e := range c.Entries {
		if includeSuperseded || e.D.Status == decision.StatusActive {
			cands = append(cands, e)
		}
	}
	si, err := c.buildIndex(cands, searchTokenizer, true)
	if err != nil {
		return nil, err
	}
	if c.search == nil {
		c.search = map[bool]*searchIndex{}
	}
	c.search[includeSuperseded] = si
	return si, nil
}

// hasNonSeed reports whether the store holds a decision other than the
// scaffold seed (without building a list on every check).
func (c *Corpus) hasNonSeed() bool {
	for _, e := range c.Entries {
		if !e.D.IsSeed() {
			return true
		}
	}
	return false
}

// NonSeed returns the decisions other than the scaffold seed.
func (c *Corpus) NonSeed() []Entry {
	var out []Entry
	for _, e := range c.Entries {
		if !e.D.IsSeed() {
			out = append(out, e)
		}
	}
	return out
}

// FindStem returns the first stem (in list order) whose number is num:
// the stem starting with the zero-padded number and a dash.
func FindStem(stems []string, num int) (string, bool) {
	prefix := fmt.Sprintf("%03d-", num)
	for _, s := range stems {
		if strings.HasPrefix(s, prefix) {
			return s, true
		}
	}
	return "", false
}

// NextNumber is one more than the highest decision number in the store.
func NextNumber(stems []string) int {
	max, found := 0, false
	for _, s := range stems {
		if n, ok := decision.NumberOf(s); ok && (!found || n > max) {
			max, found = n, true
		}
	}
	if !found {
		return 1
	}
	return max + 1
}

// MemStore is an in-memory Store (tests, fixtures, dry runs).
type MemStore struct {
	mu    sync.Mutex
	Files map[string]string
}

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore { return &MemStore{Files: map[string]string{}} }

// ReadFile implements Store.
func (m *MemStore) ReadFile(path string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.Files[path]
	return t, ok, nil
}

// WriteFile implements Store.
func (m *MemStore) WriteFile(_ context.Context, path, text string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Files[path] = text
	return nil
}

// ListDecisions implements Store.
func (m *MemStore) ListDecisions() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var stems []string
	for p := range m.Files {
		if rest, ok := strings.CutPrefix(p, DecisionsDir+"/"); ok && strings.HasSuffix(rest, ".md") && !strings.Contains(rest, "/") {
			stems = append(stems, strings.TrimSuffix(rest, ".md"))
		}
	}
	sort.Strings(stems)
	return stems, nil
}
