package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// SaveFromTag handles the text of a user message's `[m]` tag (the text
// after the tag). The user gives no category or topic, so both are
// derived (see derive.go); the save then follows merge-before-create like
// any other. When the text does not allow a confident category or topic,
// nothing is written and the message asks Lead to call the save tool with
// an explicit category and topic.
func (m *Manager) SaveFromTag(ctx context.Context, text string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return fmt.Sprintf("[m] needs the lesson to store after the tag. Ask the user what to remember, then call %s with category (%s), topic (2–4 words) and content.",
			m.toolName("memory_save"), strings.Join(m.CategoryIDs(), ", ")), nil
	}
	cat, body := deriveCategory(text, m.CategoryIDs())
	if body == "" {
		body = text
	}
	topic := deriveTopic(body)
	if cat == "" || topic == "" {
		return m.askLead(text, cat, topic, "nexus could not tell the "+missing(cat, topic)+" from the text with confidence"), nil
	}
	if _, err := m.FileName(cat, topic); err != nil {
		return m.askLead(text, cat, "", err.Error()), nil
	}
	res, err := m.Save(ctx, cat, topic, body)
	var ie *InputError
	if errors.As(err, &ie) {
		return m.askLead(text, cat, topic, ie.Reason), nil
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("[m] saved to .nexus/memory/%s (category %s, topic %q derived from the text): %s.",
		res.File, cat, topic, res.Message), nil
}

func missing(cat, topic string) string {
	switch {
	case cat == "" && topic == "":
		return "category or the topic"
	case cat == "":
		return "category"
	default:
		return "topic"
	}
}

// askLead is the instruction for Lead when nexus will not guess.
func (m *Manager) askLead(text, cat, topic, why string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[m]: nothing saved yet — %s. Call %s with:\n", why, m.toolName("memory_save"))
	if cat != "" {
		fmt.Fprintf(&b, "  category: %q (nexus's guess; one of %s)\n", cat, strings.Join(m.CategoryIDs(), ", "))
	} else {
		fmt.Fprintf(&b, "  category: one of %s (empirical = verified by our own experiments, external = upstream constraints and references, pattern = tactical recipes)\n", strings.Join(m.CategoryIDs(), ", "))
	}
	if topic != "" {
		fmt.Fprintf(&b, "  topic: %q or a better 2–4 word name (ASCII words, no dates or versions)\n", topic)
	} else {
		b.WriteString("  topic: 2–4 descriptive ASCII words, no dates or version numbers\n")
	}
	fmt.Fprintf(&b, "  content: the lesson below, in the user's words (store only what cannot be found again in the code or on the web)\n---\n%s\n---", text)
	return b.String()
}

// GCFromTag handles `[m:gc]`: it reports, it never deletes. The message
// carries the report and says how to delete chosen files.
func (m *Manager) GCFromTag(ctx context.Context, text string) (string, error) {
	rep, err := m.Report(ctx)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("[m:gc] ")
	b.WriteString(rep.Text())
	if len(rep.Files) > 0 {
		fmt.Fprintf(&b, "\nTo forget files, show this report to the user and delete only the files they choose: call %s with delete: [file names], or run `nexus memory gc --delete FILE…`. Each deletion is one git commit that names the restore command. Files that overlap can be merged by hand instead.\n",
			m.toolName("memory_gc"))
	}
	if t := strings.TrimSpace(text); t != "" {
		fmt.Fprintf(&b, "The user added: %s\n", t)
	}
	return b.String(), nil
}
