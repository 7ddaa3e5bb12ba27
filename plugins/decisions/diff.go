package decisions

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyjson"
	"github.com/nexus-harness/nexus/plugins/decisions/store"
	"github.com/nexus-harness/nexus/plugins/sdk"
)

// Sentinels of diff_since_last_session.
const (
	diffNeedTwo   = "Not enough snapshots to compute a diff (need at least 2)."
	diffNone      = "No snapshots available."
	diffSameRange = "Only one snapshot covers the requested time range \u2014 no diff available."
)

func (p *Plugin) diffSince(ctx context.Context, pr *project, args json.RawMessage) (*sdk.ToolResult, error) {
	var a struct {
		Days *int `json:"days"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	metas, err := pr.fs.ListSnapshots()
	if err != nil {
		return nil, err
	}
	env := pyjson.NewObject().Set("store", "local")
	if len(metas) == 0 {
		return dictResult(withProject(env.Set("diff", diffNone), pr)), nil
	}
	latest := metas[0]
	var base *store.SnapshotMeta
	if a.Days == nil {
		if len(metas) < 2 {
			return dictResult(withProject(env.Set("diff", diffNeedTwo), pr)), nil
		}
		base = &metas[1]
	} else {
		base = nearDate(metas, p.Now().Add(-time.Duration(*a.Days)*24*time.Hour))
		if base == nil {
			return dictResult(withProject(env.Set("diff", diffNone), pr)), nil
		}
		env.Set("cutoff_date_used", base.Timestamp)
		if base.Version == latest.Version {
			return dictResult(withProject(env.Set("diff", diffSameRange), pr)), nil
		}
	}
	from, err := pr.fs.LoadSnapshot(base.Version)
	if err != nil {
		return nil, err
	}
	to, err := pr.fs.LoadSnapshot(latest.Version)
	if err != nil {
		return nil, err
	}
	text := snapshotDiff(base.Version, latest.Version, from, to)
	out := pyjson.NewObject().Set("store", "local").Set("diff", text)
	if v, ok := env.Get("cutoff_date_used"); ok {
		out.Set("cutoff_date_used", v)
	}
	return dictResult(withProject(out, pr)), nil
}

// nearDate is the latest snapshot at or before target, else the oldest.
func nearDate(metas []store.SnapshotMeta, target time.Time) *store.SnapshotMeta {
	var best, oldest *store.SnapshotMeta
	var bestT, oldestT time.Time
	for i := range metas {
		t, ok := store.ParseTimestamp(metas[i].Timestamp)
		if !ok {
			continue
		}
		if oldest == nil || t.Before(oldestT) {
			oldest, oldestT = &metas[i], t
		}
		if !t.After(target) && (best == nil || t.After(bestT)) {
			best, bestT = &metas[i], t
		}
	}
	if best != nil {
		return best
	}
	return oldest
}

func snapshotFiles(o *pyjson.Object) map[string]string {
	out := map[string]string{}
	v, _ := o.Get("files")
	if fo, ok := v.(*pyjson.Object); ok {
		for _, k := range fo.Keys() {
			s, _ := fo.Get(k)
			out[k], _ = s.(string)
		}
	}
	return out
}

// snapshotDiff summarises what changed between two snapshots: decisions
// added, removed and changed (with status changes), then other files.
func snapshotDiff(fromV, toV int, from, to *pyjson.Object) string {
	a, b := snapshotFiles(from), snapshotFiles(to)
	var added, removed, changed, files []string
	names := map[string]bool{}
	for k := range a {
		names[k] = true
	}
	for k := range b {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	title := func(path, text string) string {
		name := strings.TrimSuffix(strings.TrimPrefix(path, "decisions/"), ".md")
		if d, err := decision.Parse(text, name+".md"); err == nil {
			return fmt.Sprintf("%s \u2014 %s", decision.Label(d.Num), d.Title)
		}
		return name
	}
	for _, k := range sorted {
		old, inA := a[k]
		cur, inB := b[k]
		isDecision := strings.HasPrefix(k, "decisions/")
		switch {
		case inA && inB && old == cur:
		case !inA && isDecision:
			added = append(added, "- "+title(k, cur))
		case !inB && isDecision:
			removed = append(removed, "- "+title(k, old))
		case isDecision:
			line := "- " + title(k, cur)
			name := strings.TrimPrefix(k, "decisions/")
			od, e1 := decision.Parse(old, name)
			nd, e2 := decision.Parse(cur, name)
			if e1 == nil && e2 == nil && od.Status != nd.Status {
				line += fmt.Sprintf(" (status %s \u2192 %s)", od.Status, nd.Status)
			}
			changed = append(changed, line)
		case !inA:
			files = append(files, "- "+k+" (added)")
		case !inB:
			files = append(files, "- "+k+" (removed)")
		default:
			files = append(files, "- "+k+" (changed)")
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "## Snapshot Diff (v%03d \u2192 v%03d)", fromV, toV)
	section := func(head string, lines []string) {
		if len(lines) > 0 {
			sb.WriteString("\n\n### " + head + "\n" + strings.Join(lines, "\n"))
		}
	}
	section("Decisions added", added)
	section("Decisions changed", changed)
	section("Decisions removed", removed)
	section("Other files", files)
	if len(added)+len(changed)+len(removed)+len(files) == 0 {
		sb.WriteString("\n\nNo changes.")
	}
	return sb.String()
}
