package state

import (
	"bytes"
	"maps"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// Cached values are shared between readers, so a transaction works on a
// copy: clone copies everything a tool may change in place (slices,
// maps), while strings and the pointees of optional fields, which tools
// only ever replace, stay shared.

func cloneExtra(e Extra) Extra {
	if e == nil {
		return nil
	}
	return maps.Clone(e)
}

func (p *Plan) clone() *Plan {
	c := *p
	c.Extra = cloneExtra(p.Extra)
	c.Issues = make([]Issue, len(p.Issues))
	for i, is := range p.Issues {
		is.HowAgents = slices.Clone(is.HowAgents)
		is.HowSummary = maps.Clone(is.HowSummary)
		is.HowAgentIDs = maps.Clone(is.HowAgentIDs)
		is.Extra = cloneExtra(is.Extra)
		c.Issues[i] = is
	}
	return &c
}

func (t *Tasks) clone() *Tasks {
	c := *t
	c.Extra = cloneExtra(t.Extra)
	c.Decisions = slices.Clone(t.Decisions)
	c.Tasks = make([]Task, len(t.Tasks), len(t.Tasks)+1)
	for i, x := range t.Tasks {
		x.Deps = slices.Clip(x.Deps)
		c.Tasks[i] = x
	}
	return &c
}

// equal reports whether two tasks encode to the same JSON.
func (t *Task) equal(o *Task) bool {
	return t.ID == o.ID && t.Title == o.Title && t.Context == o.Context && t.Status == o.Status &&
		t.CreatedAt == o.CreatedAt && eqPtr(t.Approach, o.Approach) && eqPtr(t.Acceptance, o.Acceptance) &&
		eqPtr(t.Risk, o.Risk) && eqPtr(t.PlanIssue, o.PlanIssue) && eqPtr(t.Owner, o.Owner) &&
		eqPtr(t.OwnerAgentID, o.OwnerAgentID) && eqPtr(t.OwnerReusePolicy, o.OwnerReusePolicy) &&
		slices.Equal(t.Deps, o.Deps) && eqExtra(t.Extra, o.Extra)
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// equal reports whether two issues encode to the same JSON (an omitzero
// slice or map is written when it is empty but not nil).
func (is *Issue) equal(o *Issue) bool {
	return is.ID == o.ID && is.Title == o.Title && is.Status == o.Status && eqPtr(is.Decision, o.Decision) &&
		(is.HowAgents == nil) == (o.HowAgents == nil) && slices.Equal(is.HowAgents, o.HowAgents) &&
		(is.HowSummary == nil) == (o.HowSummary == nil) && maps.Equal(is.HowSummary, o.HowSummary) &&
		(is.HowAgentIDs == nil) == (o.HowAgentIDs == nil) && maps.Equal(is.HowAgentIDs, o.HowAgentIDs) &&
		eqExtra(is.Extra, o.Extra)
}

// equal reports whether two tracker entries encode to the same JSON.
func (e *TrackerEntry) equal(o *TrackerEntry) bool {
	return e.HarnessID == o.HarnessID && e.AgentName == o.AgentName && e.AgentID == o.AgentID &&
		e.StartedAt == o.StartedAt && e.LastResumedAt == o.LastResumedAt && eqPtr(e.ResumeCount, o.ResumeCount) &&
		e.Status == o.Status && e.StoppedAt == o.StoppedAt && eqPtr(e.LastMessage, o.LastMessage) &&
		(e.FilesTouched == nil) == (o.FilesTouched == nil) && slices.Equal(e.FilesTouched, o.FilesTouched) &&
		eqExtra(e.Extra, o.Extra)
}

func eqExtra(a, b Extra) bool {
	return maps.EqualFunc(a, b, func(x, y jsontext.Value) bool { return bytes.Equal(x, y) })
}
