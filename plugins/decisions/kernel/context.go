package kernel

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
)

// Context sizes.
const (
	l0QuestionsLimit = 3
	l0DecisionsLimit = 10
	l1DecisionsLimit = 10
	l1SummaryLimit   = 10
	ageNoteDays      = 30
)

func readOr(s Store, p string) (string, error) {
	t, _, err := s.ReadFile(p)
	return t, err
}

func activeNewestFirst(c *Corpus) []*decision.Decision {
	var out []*decision.Decision
	for i := len(c.Entries) - 1; i >= 0; i-- {
		if c.Entries[i].D.Status == decision.StatusActive {
			out = append(out, c.Entries[i].D)
		}
	}
	return out
}

func summaryLines(ds []*decision.Decision) []string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = fmt.Sprintf("- D%d \u2014 %s (%s)", d.Num, d.Title, d.Date)
	}
	return lines
}

func stateText(s Store) (string, error) {
	cur, err := readOr(s, StateCurrentFile)
	if err != nil {
		return "", err
	}
	if pytext.Strip(cur) != "" {
		return cur, nil
	}
	legacy, err := readOr(s, StateLegacyFile)
	if err != nil {
		return "", err
	}
	return legacy, nil
}

var reStackBullet = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-\s+\*\*(.+?)\*\*`) })

// stackOneLiner lists the bold names of stack.md's top-level bullets.
func stackOneLiner(stack string) string {
	var names []string
	for _, line := range strings.Split(stack, "\n") {
		st := pytext.Strip(line)
		if strings.HasPrefix(st, "- ") && !strings.HasPrefix(line, "  ") {
			if m := reStackBullet().FindStringSubmatch(st); m != nil {
				names = append(names, m[1])
			}
		}
	}
	return strings.Join(names, ", ")
}

var reLegacyTime = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}) \d{2}:\d{2} UTC$`) })

// GetContext assembles the L0, L1 or L2 context text.
func GetContext(s Store, level int, now time.Time) (string, error) {
	c, err := Decisions(s)
	if err != nil {
		return "", err
	}
	state, err := stateText(s)
	if err != nil {
		return "", err
	}
	stack, err := readOr(s, StackFile)
	if err != nil {
		return "", err
	}
	questions, err := readOr(s, OpenQuestionsFile)
	if err != nil {
		return "", err
	}
	project, err := readOr(s, ProjectFile)
	if err != nil {
		return "", err
	}
	var sections []string
	add := func(t string) {
		if pytext.Strip(t) != "" {
			sections = append(sections, pytext.Strip(t))
		}
	}
	active := activeNewestFirst(c)
	switch level {
	case 0:
		if body := stripStateHeader(state); body != "" {
			sections = append(sections, "## Current State\n"+body)
		}
		if one := stackOneLiner(stack); one != "" {
			sections = append(sections, "**Stack:** "+one)
		}
		if q := l0Questions(questions, now); q != "" {
			sections = append(sections, "## Open Questions\n"+q)
		}
		if len(active) > 0 {
			sections = append(sections, "## Recent Decisions\n"+strings.Join(summaryLines(active[:min(len(active), l0DecisionsLimit)]), "\n"))
		}
	case 1:
		add(project)
		add(state)
		add(stack)
		add(questions)
		if len(active) > 0 {
			recent := active[:min(len(active), l1DecisionsLimit)]
			parts := make([]string, len(recent))
			for i, d := range recent {
				full, err := c.Full(Entry{Stem: stemOf(c, d), D: d})
				if err != nil {
					return "", err
				}
				parts[i] = pytext.Strip(full.Content)
			}
			sections = append(sections, "## Decisions\n\n"+strings.Join(parts, "\n\n---\n\n"))
			if len(active) > l1DecisionsLimit {
				beyond := active[l1DecisionsLimit:min(len(active), l1DecisionsLimit+l1SummaryLimit)]
				sections = append(sections, "## Earlier Decisions\n"+strings.Join(summaryLines(beyond), "\n"))
			}
		}
	default:
		history, err := readOr(s, StateHistoryFile)
		if err != nil {
			return "", err
		}
		switch {
		case pytext.Strip(state) != "" && history != "":
			add(state + "\n\n# State History\n\n" + history)
		case pytext.Strip(state) != "":
			add(state)
		default:
			add(history)
		}
		if len(c.Entries) > 0 {
			parts := make([]string, len(c.Entries))
			for i, e := range c.Entries {
				full, err := c.Full(e)
				if err != nil {
					return "", err
				}
				parts[i] = pytext.Strip(full.Content)
			}
			sections = append(sections, "## All Decisions\n\n"+strings.Join(parts, "\n\n---\n\n"))
		}
		add(questions)
	}
	if len(c.Entries) == 0 {
		sections = append(sections, NoContextYet)
	}
	return strings.Join(sections, "\n\n"), nil
}

func stripStateHeader(state string) string {
	lines := strings.Split(pytext.Strip(state), "\n")
	if len(lines) > 0 && pytext.Strip(lines[0]) == "# Current State" {
		lines = lines[1:]
		for len(lines) > 0 && pytext.Strip(lines[0]) == "" {
			lines = lines[1:]
		}
	}
	return pytext.Strip(strings.Join(lines, "\n"))
}

func l0Questions(text string, now time.Time) string {
	if pytext.Strip(text) == "" {
		return ""
	}
	var lines []string
	for i, b := range ParseQuestions(text).OpenEntries() {
		if i >= l0QuestionsLimit {
			break
		}
		if m := reLegacyTime().FindStringSubmatch(b.ID); m != nil {
			if t, err := time.Parse("2006-01-02", m[1]); err == nil {
				days := int(now.UTC().Truncate(24*time.Hour).Sub(t) / (24 * time.Hour))
				if days > ageNoteDays {
					lines = append(lines, fmt.Sprintf("(open %d days; consider closing or deferring)", days))
				}
			}
		}
		lines = append(lines, b.Lines...)
	}
	return strings.Join(lines, "\n")
}

// State-file markers.
const (
	stateHeader     = "# Current State"
	lastUpdatedPfx  = "*Last updated: "
	stateTimeLayout = "2006-01-02T15:04Z"
)

var stateStopWords = map[string]bool{"the": true, "a": true, "an": true, "to": true, "and": true, "or": true, "is": true, "was": true, "-": true}

// UpdateState is update_state: the delta becomes the current state and the
// previous body moves to state_history.md. It returns the tool's text.
func UpdateState(ctx context.Context, s Store, delta string, now time.Time) (string, error) {
	if e := lengthError("Delta", delta, MaxDeltaLength); e != nil {
		return e.Reason, nil
	}
	cur, ok, err := s.ReadFile(StateCurrentFile)
	if err != nil {
		return "", err
	}
	legacy := false
	if !ok {
		old, ok, err := s.ReadFile(StateLegacyFile)
		if err != nil {
			return "", err
		}
		if !ok {
			return "State updated.", nil
		}
		legacy = true
		if err := s.WriteFile(ctx, StateCurrentFile, old); err != nil {
			return "", err
		}
		cur = old
	}
	warning := ""
	if !legacy {
		warning = overlapWarning(delta, cur)
	}
	stamp := now.UTC().Format(stateTimeLayout)
	next := fmt.Sprintf("%s\n\n%s\n\n%s%s*\n", stateHeader, delta, lastUpdatedPfx, stamp)
	if err := s.WriteFile(ctx, StateCurrentFile, next); err != nil {
		return "", err
	}
	if body := stripStateFrame(cur); body != "" {
		hist, _, err := s.ReadFile(StateHistoryFile)
		if err != nil {
			return "", err
		}
		if err := s.WriteFile(ctx, StateHistoryFile, hist+fmt.Sprintf("## %s\n\n%s\n\n---\n", stamp, body)); err != nil {
			return "", err
		}
	}
	if warning != "" {
		return "State updated. " + warning, nil
	}
	return "State updated.", nil
}

func stripStateFrame(content string) string {
	var kept []string
	for _, line := range strings.Split(content, "\n") {
		st := pytext.Strip(line)
		if strings.HasPrefix(st, stateHeader) || (strings.HasPrefix(st, lastUpdatedPfx) && strings.HasSuffix(st, "*")) {
			continue
		}
		kept = append(kept, line)
	}
	return pytext.Strip(strings.Join(kept, "\n"))
}

func overlapWarning(delta, current string) string {
	words := map[string]bool{}
	for _, w := range pytext.Fields(pytext.Lower(delta)) {
		words[w] = true
	}
	for _, line := range strings.Split(current, "\n") {
		if !strings.HasPrefix(line, "- ") || strings.Contains(line, "none yet") {
			continue
		}
		shared := map[string]bool{}
		for _, w := range pytext.Fields(pytext.Lower(line)) {
			if words[w] && !stateStopWords[w] {
				shared[w] = true
			}
		}
		if len(shared) >= 3 {
			return "State update shares keywords with existing entry: " + pytext.Strip(line)
		}
	}
	return ""
}

// Flag-question hint thresholds.
const (
	flagHintMinScore    = 0.7
	flagHintTitleLength = 100
)

// FlagQuestion appends a question to open-questions.md and returns the
// tool's text. A question already answered by a decision gets a hint.
func FlagQuestion(ctx context.Context, s Store, question, qctx string) (string, error) {
	if e := lengthError("Question", question, MaxQuestionLength); e != nil {
		return e.Reason, nil
	}
	if qctx != "" {
		if e := lengthError("Context", qctx, MaxContextLength); e != nil {
			return e.Reason, nil
		}
	}
	for _, field := range []struct{ name, v string }{{"question", question}, {"context", qctx}} {
		if msg := EnvelopeFragment(field.name, field.v); msg != "" {
			return msg, nil
		}
	}
	hint := ""
	if !strings.HasPrefix(question, "BRIEF:") && !strings.HasPrefix(question, "RESUME:") {
		c, err := Decisions(s)
		if err != nil {
			return "", err
		}
		hits, err := c.related(question)
		if err != nil {
			return "", err
		}
		if len(hits) > 0 && float64(hits[0].Raw) > flagHintMinScore {
			hint = fmt.Sprintf("This question appears to be addressed by decision-%03d: %s.", hits[0].Num, pytext.Head(hits[0].Title, flagHintTitleLength))
		}
	}
	text, _, err := s.ReadFile(OpenQuestionsFile)
	if err != nil {
		return "", err
	}
	q := ParseQuestions(text)
	entry := fmt.Sprintf("- [Q%d] %s", q.NextQNumber(), question)
	if qctx != "" {
		entry += " (context: " + qctx + ")"
	}
	q.Add(entry)
	if err := s.WriteFile(ctx, OpenQuestionsFile, q.Format()); err != nil {
		return "", err
	}
	if hint != "" {
		return hint + " The question has still been logged.", nil
	}
	return "Question flagged.", nil
}

// ResolveQuestions stamps targets as resolved by a decision id (the
// resolve action of flag_question).
func ResolveQuestions(ctx context.Context, s Store, resolvedBy string, targets []string, now time.Time) (string, error) {
	num, ok := decision.NumberOf(resolvedBy)
	if !ok {
		return fmt.Sprintf("resolved_by %s does not name a decision.", pytext.Repr(resolvedBy)), nil
	}
	stems, err := s.ListDecisions()
	if err != nil {
		return "", err
	}
	if _, ok := FindStem(stems, num); !ok {
		return fmt.Sprintf("resolved_by %s does not match a decision in the store.", pytext.Repr(resolvedBy)), nil
	}
	if len(targets) == 0 {
		return "targets must name at least one question id to resolve.", nil
	}
	text, _, err := s.ReadFile(OpenQuestionsFile)
	if err != nil {
		return "", err
	}
	q := ParseQuestions(text)
	if msg := q.CheckResolvable(targets); msg != "" {
		return strings.Replace(msg, "resolves_questions", "targets", 1), nil
	}
	if _, changed := q.Resolve(targets, num, today(now)); changed {
		if err := s.WriteFile(ctx, OpenQuestionsFile, q.Format()); err != nil {
			return "", err
		}
	}
	return "Question(s) resolved.", nil
}

var envelopeTokens = []string{"</question>", "</rationale>", "</context>", "</parameter>", "</invoke>", "<parameter name=", "<invoke name="}

// EnvelopeFragment returns the reference's rejection when a field carries a
// tool-call envelope fragment (a client that failed to extract a value).
func EnvelopeFragment(field, v string) string {
	for _, tok := range envelopeTokens {
		if strings.Contains(v, tok) {
			return fmt.Sprintf("%s contains tool-use envelope fragment %s. This usually means the client failed to extract the parameter value cleanly from an XML tool call. Resend the call with just the prose content.", field, pytext.Repr(tok))
		}
	}
	return ""
}

// stemOf finds the stem of an entry's decision.
func stemOf(c *Corpus, d *decision.Decision) string {
	for _, e := range c.Entries {
		if e.D == d {
			return e.Stem
		}
	}
	return ""
}
