package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/nexus-harness/nexus/harness/tags"
	"github.com/nexus-harness/nexus/internal/state"
)

// Inline-action handler names of tags.yml.
const (
	HandlerDecide    = "nx_plan_decide"
	HandlerMemory    = "memory_store"
	HandlerMemoryGC  = "memory_gc"
	HandlerRuleStore = "rule_store"
)

// MaxInlineActions is how many inline actions ([d], [m], [m:gc], [rule])
// one message runs, in message order. Each may write a file and log a line,
// so a message of thousands of tags would otherwise hold the prompt for
// seconds; the actions past the limit are not run, and the reply says which
// (docs/hooks.md).
const MaxInlineActions = 20

func (e *Engine) profile() *tags.Profile {
	p := tags.NewProfile(e.o.Host.Skills, e.Detector(), e.prefix())
	p.AgentPrefix = e.o.Host.AgentPrefix
	return p
}

func (e *Engine) activateSkill(skill, mode string) (tags.SkillText, error) {
	return tags.ActivateSkill(e.o.Core, skill, mode, e.profile())
}

// --- user_message --------------------------------------------------------

func (e *Engine) userMessage(ctx context.Context, ev Event) (Reply, error) {
	if ev.AgentID != "" {
		return e.subagentMessage(ctx, ev)
	}
	r, _ := e.message(ctx, ev)
	return r, nil
}

// messageRun is what handling one user message did, for `tags explain`:
// the detection, whether the skill tag's skill could not be activated,
// and the answer of each inline action run, in message order.
type messageRun struct {
	res      tags.Result
	skillErr error
	actions  []string
}

// message handles a user message: the hook's reply, and what it did.
func (e *Engine) message(ctx context.Context, ev Event) (Reply, messageRun) {
	var run messageRun
	if e.o.Host.SkillTool != "" && ev.AgentID == "" && strings.HasPrefix(ev.Prompt, "/") {
		// A slash command of an installed skill (/nx-plan, /nexus:nx-plan):
		// the host loads it; nexus records it as the active skill.
		cmd, _, _ := strings.Cut(strings.TrimPrefix(ev.Prompt, "/"), " ")
		e.markSkillLoaded(ctx, strings.TrimSpace(cmd))
	}
	res := e.Detector().Detect(ev.Prompt)
	run.res = res
	var parts []part
	var notices []string
	if m := res.Skill; m != nil {
		st, err := e.activateSkill(m.Tag.Skill, m.Variant)
		run.skillErr = err
		switch {
		case err != nil:
			parts = append(parts, part{text: fmt.Sprintf("nexus could not activate the %s skill for %s: %v", m.Tag.Skill, m.Token, err)})
			e.log.Log(ctx, "error", UserMessage, ev.AgentID, err.Error())
		default:
			if st.ExpandErr != nil {
				e.log.Log(ctx, "error", UserMessage, ev.AgentID, st.ExpandErr.Error())
				notices = append(notices, "nexus: "+st.ExpandErr.Error())
			}
			parts = append(parts, e.skillPart(st, m.Token))
			// Re-activating the active skill keeps its record (and spares
			// a durable write on the prompt path).
			if cur, ok := e.readActiveSkill(); !ok || cur.Skill != m.Tag.Skill || cur.Mode != m.Variant || cur.Tag != m.Token {
				if err := e.writeActiveSkill(ctx, ActiveSkill{Skill: m.Tag.Skill, Mode: m.Variant, Tag: m.Token, ActivatedAt: e.o.Store.Timestamp()}); err != nil {
					e.log.Log(ctx, "warn", UserMessage, ev.AgentID, "could not record the active skill: "+err.Error())
				}
			}
			e.log.Log(ctx, "debug", UserMessage, ev.AgentID, "activated skill "+m.Tag.Skill+" by "+m.Token)
		}
	}
	actions, skipped := res.Actions, []tags.Match(nil)
	if len(actions) > MaxInlineActions {
		actions, skipped = actions[:MaxInlineActions], actions[MaxInlineActions:]
	}
	done := make([]string, 0, len(actions))
	for _, a := range actions {
		text := e.runAction(ctx, a)
		parts = append(parts, part{text: text})
		if text != "" {
			notices = append(notices, text)
		}
		done = append(done, text)
	}
	run.actions = done
	e.log.LogAll(ctx, "info", UserMessage, ev.AgentID, done...)
	if len(skipped) > 0 {
		text := notRun(skipped)
		parts = append(parts, part{text: text})
		notices = append(notices, text)
		e.log.Log(ctx, "warn", UserMessage, ev.AgentID, text)
	}
	if res.Unread > 0 {
		text := fmt.Sprintf("nexus read the first %d KiB of this message for tags and not the %d bracket tokens after that (a message is read for tags up to %d KiB). Send tags still wanted in a shorter message.",
			tags.MaxScanBytes>>10, res.Unread, tags.MaxScanBytes>>10)
		parts = append(parts, part{text: text})
		notices = append(notices, text)
		e.log.Log(ctx, "warn", UserMessage, ev.AgentID, text)
	}
	parts = append(parts, e.guidance(len(res.Fired) > 0)...)
	if len(parts) == 0 {
		return Reply{}, run
	}
	return Reply{Context: e.fit(parts), Notice: strings.Join(notices, " ")}, run
}

// skillLoaded records a skill the model loaded itself (the host's skill
// tool, or a slash command that runs it) as the active skill, so the
// status line and a compaction see it.
func (e *Engine) skillLoaded(ctx context.Context, ev Event) {
	arg := e.o.Host.SkillArg
	if arg == "" {
		arg = "skill"
	}
	name, _ := ev.ToolInput[arg].(string)
	e.markSkillLoaded(ctx, name)
}

// markSkillLoaded records a host-loaded skill of the distribution (see
// skillLoaded); other names are ignored.
func (e *Engine) markSkillLoaded(ctx context.Context, name string) {
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		name = name[i+1:] // nexus:nx-plan inside the plugin
	}
	if _, ok := e.o.Core.Skill(name); !ok {
		return
	}
	a := ActiveSkill{Skill: name, Tag: e.o.Host.SkillTool + " tool", ActivatedAt: e.o.Store.Timestamp(), HostLoaded: true}
	if cur, ok := e.readActiveSkill(); ok && cur.Skill == name {
		if cur.HostLoaded {
			return
		}
		// Activated by its tag, then loaded as the hook asked.
		a = *cur
		a.HostLoaded = true
	}
	if err := e.writeActiveSkill(ctx, a); err != nil {
		e.log.Log(ctx, "warn", PostToolUse, "", "could not record the active skill: "+err.Error())
	}
}

// guidance is the status injected before inference: plan status, task
// progress and knowledge counts. Without a tag it is given only while a
// plan or task cycle is open.
func (e *Engine) guidance(tagged bool) []part {
	s := e.o.Store
	planOpen := state.Exists(s.L.PlanPath())
	tasksOpen := state.Exists(s.L.TasksPath())
	if !tagged && !planOpen && !tasksOpen {
		return nil
	}
	if !planOpen && !tasksOpen {
		return []part{{text: "nexus status:\nNo plan or task cycle is open.\n" + e.knowledge().counts()}}
	}
	// The heading rides on the plan part so that the parts stay separate
	// (each can be clipped with its own pointer).
	return []part{
		{text: "nexus status:\n" + e.planText(), more: e.morePlan()},
		{text: e.tasksText(), more: e.moreTasks()},
		{text: e.knowledge().counts()},
	}
}

// runAction carries out one inline action and returns what it did, for the
// model, the user and the log.
func (e *Engine) runAction(ctx context.Context, a tags.Match) string {
	var text string
	switch a.Tag.Handler {
	case HandlerDecide:
		text = e.decide(ctx, a)
	case HandlerMemory:
		text = e.memoryAction(ctx, a, func(m MemoryHandler) (string, error) { return m.SaveFromTag(ctx, a.Text) })
	case HandlerMemoryGC:
		text = e.memoryAction(ctx, a, func(m MemoryHandler) (string, error) { return m.GCFromTag(ctx, a.Text) })
	case HandlerRuleStore:
		text = e.storeRule(ctx, a)
	default:
		text = fmt.Sprintf("nexus has no handler %q for %s; the tag was not acted on.", a.Tag.Handler, a.Token)
	}
	return text
}

// notRun says which inline actions past MaxInlineActions were not run:
// each distinct tag with its count, in message order (the first few).
func notRun(skipped []tags.Match) string {
	const listed = 8
	counts := map[string]int{}
	var order []string
	for _, a := range skipped {
		if counts[a.Token] == 0 {
			order = append(order, a.Token)
		}
		counts[a.Token]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "nexus ran the first %d inline actions of this message and not the other %d (a message runs at most %d): ",
		MaxInlineActions, len(skipped), MaxInlineActions)
	for i, tok := range order {
		if i == listed {
			fmt.Fprintf(&b, ", and %d other tags", len(order)-listed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s ×%d", tok, counts[tok])
	}
	b.WriteString(". Send the ones still wanted in another message.")
	return b.String()
}

var issueRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^(?:#|issue\s*#?)(\d+)\s*[:.,\-–—]?\s*`) })

// decidePlan works out which issue a [d] goes to. It returns the issue and
// the decision text, or a message saying why nothing can be recorded.
func (e *Engine) decidePlan(a tags.Match) (issue *state.Issue, decision, problem string) {
	decision = a.Text
	p, ok, err := e.peekPlan()
	if err != nil {
		return nil, "", readProblem("plan.json", err)
	}
	if !ok {
		return nil, "", "No active plan session: [d] is only valid inside a plan session (start one with [plan])."
	}
	var explicit int64 = -1
	if m := issueRef().FindStringSubmatch(decision); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		explicit = n
		decision = strings.TrimSpace(decision[len(m[0]):])
	}
	if decision == "" {
		return nil, "", fmt.Sprintf("%s needs the decision text after the tag.", a.Token)
	}
	if explicit >= 0 {
		for i := range p.Issues {
			if p.Issues[i].ID == explicit {
				return &p.Issues[i], decision, ""
			}
		}
		return nil, "", fmt.Sprintf("Issue %d not found in plan #%d.", explicit, p.ID)
	}
	var pending []*state.Issue
	for i := range p.Issues {
		if p.Issues[i].Status != state.IssueDecided {
			pending = append(pending, &p.Issues[i])
		}
	}
	switch len(pending) {
	case 1:
		return pending[0], decision, ""
	case 0:
		return nil, "", fmt.Sprintf("Every issue of plan #%d is already decided; to change one, write [d] #<issue id> <decision>.", p.ID)
	}
	var open []string
	for _, is := range pending {
		open = append(open, fmt.Sprintf("#%d %q", is.ID, is.Title))
	}
	return nil, "", fmt.Sprintf("%d issues are open (%s), so nexus cannot tell which one this decides; write [d] #<issue id> <decision>.", len(pending), strings.Join(open, ", "))
}

func (e *Engine) decide(ctx context.Context, a tags.Match) string {
	issue, decision, problem := e.decidePlan(a)
	if problem != "" {
		return "nexus did not record the decision: " + problem
	}
	if e.o.Tools == nil {
		return fmt.Sprintf("nexus cannot record decisions in this setup; record it with %s (issue_id %d).", e.toolRef("plan_decide"), issue.ID)
	}
	res, err := e.o.Tools.CallTool(ctx, "plan_decide", map[string]any{"issue_id": float64(issue.ID), "decision": decision})
	if err != nil {
		return "nexus did not record the decision: " + err.Error()
	}
	if msg, ok := res["error"].(string); ok {
		return "nexus did not record the decision: " + msg
	}
	text := fmt.Sprintf("nexus recorded the decision on issue #%d %q with plan_decide: %s.", issue.ID, issue.Title, decision)
	if all, _ := res["allComplete"].(bool); all {
		if m, ok := res["message"].(string); ok && m != "" {
			text += " " + m
		} else {
			text += " Every issue of the plan is now decided."
		}
	} else if rem, ok := res["remaining"].([]any); ok {
		text += fmt.Sprintf(" %d issue(s) remain undecided.", len(rem))
	}
	return text
}

func (e *Engine) memoryAction(ctx context.Context, a tags.Match, run func(MemoryHandler) (string, error)) string {
	if e.o.Memory == nil {
		return fmt.Sprintf("nexus memory features are off, so %s was not carried out.", a.Token)
	}
	msg, err := run(e.o.Memory)
	if err != nil {
		return fmt.Sprintf("nexus could not carry out %s: %v", a.Token, err)
	}
	return msg
}

var ruleName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`) })

// ruleTarget returns the rule file name for a [rule] / [rule:NAME] action,
// or a problem.
func ruleTarget(a tags.Match) (string, string) {
	if strings.TrimSpace(a.Text) == "" {
		return "", fmt.Sprintf("%s needs the rule text after the tag.", a.Token)
	}
	name := a.Variant
	if name == "" {
		name = slug(a.Text)
	}
	if !ruleName().MatchString(name) {
		return "", fmt.Sprintf("%q is not a valid rule name: use lower-case letters, digits, '-' or '_' (at most 64), e.g. [rule:testing].", name)
	}
	return name, ""
}

func (e *Engine) storeRule(ctx context.Context, a tags.Match) string {
	name, problem := ruleTarget(a)
	if problem != "" {
		return "nexus did not store the rule: " + problem
	}
	s := e.o.Store
	l, err := s.LockDir(ctx, "rules")
	if err != nil {
		return "nexus did not store the rule: " + err.Error()
	}
	defer l.Release()
	file := name + ".md"
	var content string
	old, err := s.ReadContained(s.L.RulesDir(), file)
	switch {
	case err == nil:
		content = strings.TrimRight(string(old), "\n") + "\n\n" + strings.TrimSpace(a.Text) + "\n"
	case os.IsNotExist(err):
		if a.Variant != "" {
			content = fmt.Sprintf("<!-- tags: %s -->\n\n", a.Variant)
		}
		content += strings.TrimSpace(a.Text) + "\n"
	default:
		return "nexus did not store the rule: " + err.Error()
	}
	if _, err := s.WriteContainedLocked(s.L.RulesDir(), file, []byte(content)); err != nil {
		return "nexus did not store the rule: " + err.Error()
	}
	verb := "saved the rule to"
	if old != nil {
		verb = "added the rule to"
	}
	return fmt.Sprintf("nexus %s .nexus/rules/%s.", verb, file)
}

// slug makes a rule file name from the first words of its text.
func slug(text string) string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		words = append(words, w)
		if len(words) == 5 {
			break
		}
	}
	s := strings.Join(words, "-")
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "-")
	}
	if s == "" {
		s = "rule"
	}
	return s
}

// --- tags explain ----------------------------------------------------------

// Explanation says what one bracket token of a message does.
type Explanation struct {
	Token  string `json:"token"`
	Offset int    `json:"offset"`
	Fires  bool   `json:"fires"`
	// What is the effect (for a firing tag: for an inline action, what
	// the hook answers having run it) or why it does not fire.
	What string `json:"what"`
}

// String renders one explanation line.
func (x Explanation) String() string {
	if x.Fires {
		return fmt.Sprintf("%s at byte %d: %s", x.Token, x.Offset, x.What)
	}
	return fmt.Sprintf("%s at byte %d: ignored, %s", x.Token, x.Offset, x.What)
}

// ErrNotDryRun refuses Explain on an engine whose store writes.
var ErrNotDryRun = errors.New("tags explain runs on a harness that writes nothing (state.Store.DryRun)")

// Explain says what a message would trigger, and why, by running the
// very code of the user-message hook on this engine, whose store must
// write nothing (state.Store.DryRun): each inline action's outcome is the
// answer the hook would give, and the reply is the hook's (but for the
// status it ends with, which shows the project as it was: nothing was
// written). Tokens come in message order. Plugins subscribed to the event
// are not run.
func (e *Engine) Explain(ctx context.Context, msg string) ([]Explanation, Reply, error) {
	if e.o.Store == nil || !e.o.Store.IsDryRun() {
		return nil, Reply{}, ErrNotDryRun
	}
	if e.o.Core == nil {
		return nil, Reply{}, errors.New("lifecycle engine has no distribution")
	}
	reply, run := e.message(ctx, Event{Name: UserMessage, Prompt: msg})
	res := run.res
	var out []Explanation
	actions := 0
	for _, m := range res.Fired {
		x := Explanation{Token: m.Token, Offset: m.Offset, Fires: true}
		switch {
		case !m.IsSkill() && actions >= MaxInlineActions:
			actions++
			x.What = fmt.Sprintf("inline action %s (handler %s): not run, a message runs at most %d inline actions", m.Tag.ID, m.Tag.Handler, MaxInlineActions)
		case !m.IsSkill():
			x.What = fmt.Sprintf("inline action %s (handler %s): %s", m.Tag.ID, m.Tag.Handler, run.actions[actions])
			actions++
		case res.Skill != nil && res.Skill.Offset == m.Offset:
			x.What = fmt.Sprintf("skill tag %s, injects skills/%s/body.md", m.Tag.ID, m.Tag.Skill)
			if m.Variant != "" {
				x.What += " in " + m.Variant + " mode"
			}
			if run.skillErr != nil {
				x.What = fmt.Sprintf("skill tag %s: nexus could not activate the %s skill: %v", m.Tag.ID, m.Tag.Skill, run.skillErr)
			}
		default:
			continue // listed among the ignored tokens
		}
		out = append(out, x)
	}
	for _, ig := range res.Ignored {
		out = append(out, Explanation{Token: ig.Token, Offset: ig.Offset, What: ig.Reason})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Offset < out[j].Offset })
	return out, reply, nil
}
