package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
)

// MaxContentBytes bounds one save.
const MaxContentBytes = 256 << 10

// InputError is a save request nexus refuses (bad category, topic or
// content). Nothing was written; Reason says what to change.
type InputError struct{ Reason string }

func (e *InputError) Error() string { return e.Reason }

func inputErrorf(format string, args ...any) error {
	return &InputError{Reason: fmt.Sprintf(format, args...)}
}

// FileName returns the memory file name for a category and topic:
// <prefix><topic-slug>.md. The topic must come to 2–4 words of ASCII
// letters and digits (separators become hyphens; a leading repetition of
// the category id is dropped) and may not contain a date or a version
// number: a word made only of digits, or v + digits. Dates and versions
// belong inside the file (memory_policy.yml naming).
func (m *Manager) FileName(category, topic string) (string, error) {
	c, ok := m.category(category)
	if !ok {
		return "", inputErrorf("unknown memory category %q; use one of: %s", category, strings.Join(m.CategoryIDs(), ", "))
	}
	apostrophes := strings.NewReplacer("'", "", "\u2019", "")
	ws := strings.FieldsFunc(strings.ToLower(apostrophes.Replace(topic)), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > unicode.MaxASCII)
	})
	for _, w := range ws {
		for _, r := range w {
			if r > unicode.MaxASCII {
				return "", inputErrorf("topic %q has characters outside a-z and 0-9 (%q); memory file names are lowercase ASCII kebab-case: write the topic in ASCII words", topic, w)
			}
		}
	}
	if len(ws) > 0 && (ws[0] == c.ID || ws[0]+"-" == c.Prefix) {
		ws = ws[1:]
	}
	for _, w := range ws {
		if allDigits(w) || (len(w) > 1 && w[0] == 'v' && allDigits(w[1:])) {
			return "", inputErrorf("topic %q contains %q, which reads as a date or version number; names must not carry dates or versions — put them inside the file and name the topic in words", topic, w)
		}
	}
	if len(ws) < 2 || len(ws) > 4 {
		return "", inputErrorf("topic %q has %d word(s); a memory topic is 2–4 descriptive words (e.g. \"sqlite lock timeouts\")", topic, len(ws))
	}
	name := c.Prefix + strings.Join(ws, "-") + ".md"
	if err := m.policy(); err != nil {
		return "", err
	}
	if !m.naming.MatchString(name) {
		return "", inputErrorf("file name %q does not match the memory naming pattern %s", name, m.naming)
	}
	return name, nil
}

// SaveResult says what a save did.
type SaveResult struct {
	// Action is "created" or "extended".
	Action string `json:"action"`
	// File is the file name inside .nexus/memory/, Path its absolute path.
	File string `json:"file"`
	Path string `json:"path"`
	// Candidate is the name a new file would have had.
	Candidate string `json:"candidate"`
	// Score is the best merge score among existing files of the category
	// (0 when there were none), BestMatch that file, Threshold the bar.
	Score     float64 `json:"score"`
	BestMatch string  `json:"best_match,omitempty"`
	Threshold float64 `json:"threshold"`
	// Message explains the outcome in a sentence.
	Message string `json:"message"`
}

// Save stores a memory: it extends the same-category file the candidate
// overlaps most when that overlap reaches the merge threshold (or a file
// with exactly the candidate's name exists) by appending a dated section,
// and otherwise creates .nexus/memory/<prefix><topic-slug>.md. The memory
// directory stays locked from scoring to writing, so two concurrent saves
// cannot both create near-duplicates.
func (m *Manager) Save(ctx context.Context, category, topic, content string) (*SaveResult, error) {
	name, err := m.FileName(category, topic)
	if err != nil {
		return nil, err
	}
	content = strings.TrimSpace(strings.ReplaceAll(content, "\r\n", "\n"))
	if content == "" {
		return nil, inputErrorf("the memory content is empty; give the lesson to store")
	}
	if len(content) > MaxContentBytes {
		return nil, inputErrorf("the memory content has %d bytes; one save takes at most %d — store the lesson, not a whole document", len(content), MaxContentBytes)
	}
	cat, _ := m.category(category)
	lock, err := m.store.LockDir(ctx, "memory")
	if err != nil {
		return nil, err
	}
	defer lock.Release()

	dir := m.Dir()
	res := &SaveResult{Candidate: name, Threshold: m.threshold}
	target := ""
	if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
		target = name
		res.Message = fmt.Sprintf("extended %s: a memory with exactly this name already exists", name)
	} else {
		best, score, err := m.bestMatch(cat.Prefix, topic, content)
		if err != nil {
			return nil, err
		}
		res.BestMatch, res.Score = best, round3(score)
		if best != "" && score >= m.threshold {
			target = best
			res.Message = fmt.Sprintf("extended %s instead of creating %s: it overlaps the new memory with score %.3f (threshold %.3f; merge-before-create)", best, name, score, m.threshold)
		}
	}

	var body []byte
	if target != "" {
		old, err := m.store.ReadContained(dir, target)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", target, err)
		}
		body = appendSection(old, m.now().UTC().Format("2006-01-02"), topic, content)
		res.Action, res.File = "extended", target
	} else {
		body = []byte("# " + titleOf(topic) + "\n\n" + content + "\n")
		res.Action, res.File = "created", name
		if res.BestMatch != "" {
			res.Message = fmt.Sprintf("created %s: the closest %s memory, %s, scores %.3f, below the merge threshold %.3f", name, category, res.BestMatch, res.Score, m.threshold)
		} else {
			res.Message = fmt.Sprintf("created %s: no other %s memory exists yet", name, category)
		}
	}
	path, err := m.store.WriteContainedLocked(dir, res.File, body)
	if err != nil {
		return nil, err
	}
	res.Path = path
	return res, nil
}

// bestMatch scores the candidate against the regular files of one category.
func (m *Manager) bestMatch(prefix, topic, content string) (string, float64, error) {
	entries, err := m.store.L.ReadDir(m.Dir())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", 0, nil
		}
		return "", 0, fmt.Errorf("list %s: %w", m.Dir(), err)
	}
	topicWords := wordSet(topic)
	cand := wordSet(topic, content)
	type scored struct {
		name  string
		score float64
	}
	var all []scored
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, ".md") {
			continue
		}
		// Beneath the memory folder, regular files only, through
		// state.MaxNoteBytes.
		b, err := m.store.ReadContained(m.Dir(), name)
		if err != nil {
			return "", 0, err
		}
		nameTopic := strings.TrimSuffix(strings.TrimPrefix(name, prefix), ".md")
		all = append(all, scored{name, similarity(topicWords, cand, wordsOfFile(nameTopic, string(b)))})
	}
	if len(all) == 0 {
		return "", 0, nil
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].name < all[j].name
	})
	return all[0].name, all[0].score, nil
}

// appendSection adds a dated section to an existing memory file.
func appendSection(old []byte, day, topic, content string) []byte {
	out := append([]byte(nil), old...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, '\n')
	out = append(out, "## "+day+": "+titleOf(topic)+"\n\n"+content+"\n"...)
	return out
}

// titleOf turns a topic into a heading: words capitalised.
func titleOf(topic string) string {
	ws := strings.Fields(strings.NewReplacer("-", " ", "_", " ").Replace(topic))
	for i, w := range ws {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		ws[i] = string(r)
	}
	return strings.Join(ws, " ")
}

func round3(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }
