package vocabulary

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// The checks in this file go beyond nexus-core's own validator: they make
// sure a consumer that reads only manifest.json (as hooks and tools do) sees
// the same distribution as the source files describe.

// manifestSource returns the parsed manifest.json, if it parsed.
func manifestSource(d *Distribution) (*Source, bool) {
	src, ok := d.Sources["manifest.json"]
	return src, ok
}

func metaByKind(d *Distribution, kind string) map[string]*Meta {
	out := map[string]*Meta{}
	for _, m := range d.Metas {
		if m.Kind == kind {
			out[m.Dir] = m
		}
	}
	return out
}

// CheckManifest compares manifest.json with the sources: every agent and
// skill it lists has a directory and equals its meta.yml (plus body_hash),
// every directory with a valid meta.yml is listed, and manifest.vocabulary
// equals the vocabulary files (invocations summarised to id, description,
// intent and fallback_behavior, as the generator writes them).
func CheckManifest(d *Distribution) []Finding {
	man, ok := manifestSource(d)
	if !ok {
		return nil
	}
	var out []Finding
	for _, kind := range []string{"agents", "skills"} {
		metas := metaByKind(d, kind)
		list, _ := field(man.Doc.Value, kind).([]any)
		listed := map[string]bool{}
		for i, e := range list {
			ptr := fmt.Sprintf("/%s/%d", kind, i)
			id, ok := field(e, "id").(string)
			if !ok {
				continue // G1 reports it
			}
			listed[id] = true
			m, ok := metas[id]
			if !ok {
				out = append(out, at(SeverityError, man, ptr+"/id", "manifest",
					"%s %q is listed in manifest.json but %s/%s/ does not exist", singular(kind), id, kind, id))
				continue
			}
			if !m.Valid() {
				continue
			}
			entry, _ := e.(map[string]any)
			trimmed := make(map[string]any, len(entry))
			for k, v := range entry {
				if k != "body_hash" {
					trimmed[k] = v
				}
			}
			out = append(out, compare(man, ptr, trimmed, m.Src, "", m.Src.Doc.Value)...)
		}
		for _, dir := range slices.Sorted(maps.Keys(metas)) {
			if m := metas[dir]; m.Valid() && !listed[dir] {
				out = append(out, at(SeverityError, man, "/"+kind, "manifest",
					"%s/%s/ is not listed in manifest.json (regenerate the manifest, or remove the directory)", kind, dir))
			}
		}
	}
	vocab, _ := field(man.Doc.Value, "vocabulary").(map[string]any)
	if vocab == nil {
		return out
	}
	for _, vf := range VocabularyFiles {
		src, ok := d.ValidSource("vocabulary/" + vf.Name)
		if !ok {
			continue
		}
		key, yamlPtr := vf.Key, "/"+vf.Key
		want := pointerValue(src.Doc.Value, yamlPtr)
		if vf.Key == "" {
			key, yamlPtr, want = "memory_policy", "", src.Doc.Value
		}
		got, present := vocab[key]
		if !present {
			continue // G1 reports the missing key
		}
		if key == "invocations" {
			want = summariseInvocations(want)
		}
		out = append(out, compare(man, "/vocabulary/"+key, got, src, yamlPtr, want)...)
	}
	return out
}

func singular(kind string) string { return strings.TrimSuffix(kind, "s") }

// summariseInvocations keeps the four keys the manifest generator copies.
func summariseInvocations(v any) any {
	list, _ := v.([]any)
	out := make([]any, len(list))
	for i, e := range list {
		m, _ := e.(map[string]any)
		s := map[string]any{}
		for _, k := range []string{"id", "description", "intent", "fallback_behavior"} {
			if x, ok := m[k]; ok {
				s[k] = x
			}
		}
		out[i] = s
	}
	return out
}

// maxDiffs bounds the findings one comparison produces: past a few, the
// rest are noise around the same cause (an old manifest, a hand edit).
const maxDiffs = 5

// compare reports where got (in the manifest, at gotPtr) differs from want
// (in src, at wantPtr).
func compare(man *Source, gotPtr string, got any, src *Source, wantPtr string, want any) []Finding {
	var diffs []diff
	diffValues(got, want, "", &diffs)
	var out []Finding
	for i, df := range diffs {
		if i == maxDiffs {
			out = append(out, at(SeverityError, man, gotPtr, "manifest", "%d more differences from %s", len(diffs)-maxDiffs, src.File))
			break
		}
		wp := src.PosOf(wantPtr + df.ptr)
		out = append(out, at(SeverityError, man, gotPtr+df.ptr, "manifest", "differs from %s:%d:%d (%s): %s",
			src.File, wp.Line, wp.Col, PointerToPath(wantPtr+df.ptr), df.msg))
	}
	return out
}

type diff struct{ ptr, msg string }

func diffValues(got, want any, ptr string, out *[]diff) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*out = append(*out, diff{ptr, fmt.Sprintf("manifest has %s, the source has an object", brief(got))})
			return
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			p := ptr + "/" + escapeToken(k)
			if gv, ok := g[k]; ok {
				diffValues(gv, w[k], p, out)
			} else {
				*out = append(*out, diff{p, fmt.Sprintf("key %q is missing from the manifest", k)})
			}
		}
		for _, k := range slices.Sorted(maps.Keys(g)) {
			if _, ok := w[k]; !ok {
				*out = append(*out, diff{ptr + "/" + escapeToken(k), fmt.Sprintf("key %q is not in the source", k)})
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			*out = append(*out, diff{ptr, fmt.Sprintf("manifest has %s, the source has a list", brief(got))})
			return
		}
		if len(g) != len(w) {
			*out = append(*out, diff{ptr, fmt.Sprintf("manifest has %d entries, the source %d", len(g), len(w))})
			return
		}
		for i := range w {
			diffValues(g[i], w[i], fmt.Sprintf("%s/%d", ptr, i), out)
		}
	default:
		if !scalarEqual(got, want) {
			*out = append(*out, diff{ptr, fmt.Sprintf("manifest has %s, the source has %s", brief(got), brief(want))})
		}
	}
}

func scalarEqual(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	switch a.(type) {
	case map[string]any, []any:
		return false
	}
	return a == b
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// brief renders a value for a message, shortened.
func brief(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "..."
	}
	return s
}

func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// CheckBodyHashes recomputes every manifest body_hash from its body.md with
// nexus-core's byte rule (BodyHash). A body.md that is not valid UTF-8 is an
// error of its own: nexus-core would hash U+FFFD substitutes, which nexus
// does not reproduce.
func CheckBodyHashes(d *Distribution) []Finding {
	man, ok := manifestSource(d)
	if !ok {
		return nil
	}
	var out []Finding
	for _, kind := range []string{"agents", "skills"} {
		metas := metaByKind(d, kind)
		list, _ := field(man.Doc.Value, kind).([]any)
		for i, e := range list {
			id, _ := field(e, "id").(string)
			m, ok := metas[id]
			if !ok {
				continue // CheckManifest reports it
			}
			rel := m.BodyFile()
			raw, err := d.ReadFile(rel)
			if err != nil {
				if !os.IsNotExist(err) { // G9 reports a missing body.md
					out = append(out, Finding{Severity: SeverityError, File: rel, Path: "$", Gate: "body-hash", Message: fmt.Sprintf("cannot read: %v", err)})
				}
				continue
			}
			if off := firstInvalidUTF8(raw); off >= 0 {
				line, col := lineCol(raw, off)
				out = append(out, Finding{Severity: SeverityError, File: rel, Line: line, Col: col, Path: "$", Gate: "body-hash",
					Message: fmt.Sprintf("not valid UTF-8 (byte 0x%02x at offset %d); save the file as UTF-8", raw[off], off)})
				continue
			}
			want, _ := field(e, "body_hash").(string)
			if got := BodyHash(raw); got != want {
				out = append(out, at(SeverityError, man, fmt.Sprintf("/%s/%d/body_hash", kind, i), "body-hash",
					"%s hashes to %s, the manifest says %q (body edited after the manifest was generated, or a mixed install)", rel, got, want))
			}
		}
	}
	return out
}

// CheckTagSkills checks that every tag of type skill names a skill that
// exists under skills/.
func CheckTagSkills(d *Distribution) []Finding {
	src, ok := d.ValidSource("vocabulary/tags.yml")
	if !ok {
		return nil
	}
	skills := metaByKind(d, "skills")
	var out []Finding
	for i, t := range entries(src, "tags") {
		if str(t, "type") != TagSkill {
			continue
		}
		if id := str(t, "skill"); skills[id] == nil {
			out = append(out, at(SeverityError, src, fmt.Sprintf("/tags/%d/skill", i), "consumer",
				"tag %q activates skill %q, but skills/%s/ does not exist", str(t, "id"), id, id))
		}
	}
	return out
}

// CheckManifestRefs checks the manifest on its own terms, as a consumer
// reading only manifest.json depends on it: agents' categories, resume
// tiers and capabilities, skills' triggers and tags' skills all resolve
// inside the manifest.
func CheckManifestRefs(d *Distribution) []Finding {
	man, ok := manifestSource(d)
	if !ok {
		return nil
	}
	vocab, _ := field(man.Doc.Value, "vocabulary").(map[string]any)
	ids := func(key string, keep func(any) bool) map[string]bool {
		list, ok := vocab[key].([]any)
		if !ok {
			return nil
		}
		out := map[string]bool{}
		for _, e := range list {
			if keep == nil || keep(e) {
				out[str(e, "id")] = true
			}
		}
		return out
	}
	caps, cats, tiers := ids("capabilities", nil), ids("categories", nil), ids("resume_tiers", nil)
	skillTags := ids("tags", func(e any) bool { return str(e, "type") == TagSkill })
	skills := map[string]bool{}
	if list, ok := field(man.Doc.Value, "skills").([]any); ok {
		for _, e := range list {
			skills[str(e, "id")] = true
		}
	}
	var out []Finding
	unknown := func(set map[string]bool, v any, ptr, what, where string) {
		s, ok := v.(string)
		if ok && set != nil && !set[s] {
			out = append(out, at(SeverityError, man, ptr, "consumer", "%s %q is not defined in manifest.json %s", what, s, where))
		}
	}
	agents, _ := field(man.Doc.Value, "agents").([]any)
	for i, a := range agents {
		p := fmt.Sprintf("/agents/%d", i)
		caplist, _ := field(a, "capabilities").([]any)
		for j, c := range caplist {
			unknown(caps, c, fmt.Sprintf("%s/capabilities/%d", p, j), "capability", "vocabulary.capabilities")
		}
		unknown(cats, field(a, "category"), p+"/category", "category", "vocabulary.categories")
		unknown(tiers, field(a, "resume_tier"), p+"/resume_tier", "resume tier", "vocabulary.resume_tiers")
	}
	skillList, _ := field(man.Doc.Value, "skills").([]any)
	for i, s := range skillList {
		trig, _ := field(s, "triggers").([]any)
		for j, t := range trig {
			unknown(skillTags, t, fmt.Sprintf("/skills/%d/triggers/%d", i, j), "trigger", "vocabulary.tags (type skill)")
		}
	}
	if tags, ok := vocab["tags"].([]any); ok {
		for i, t := range tags {
			if str(t, "type") == TagSkill {
				unknown(skills, field(t, "skill"), fmt.Sprintf("/vocabulary/tags/%d/skill", i), "skill", "skills")
			}
		}
	}
	return out
}
