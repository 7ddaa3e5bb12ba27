package vocabulary

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nexus-harness/nexus/schema"
)

// FixtureDirs are the conformance fixture folders, relative to the
// distribution. tools/ and lifecycle/ ship with every 0.10–0.12 release;
// scenarios/ is optional (absent from some copies).
var FixtureDirs = []struct {
	Dir      string
	Required bool
}{
	{"conformance/tools", true},
	{"conformance/lifecycle", true},
	{"conformance/scenarios", false},
}

// AbstractTools are the tool names a fixture's action may call.
var AbstractTools = map[string]bool{
	"plan_start": true, "plan_status": true, "plan_update": true, "plan_decide": true,
	"task_add": true, "task_list": true, "task_update": true, "task_close": true,
	"history_search": true, "context": true, "artifact_write": true,
}

var placeholderToken = lazyRegexp(`\{[^{}]*\}`)

// CheckFixtures validates every conformance fixture against
// conformance/schema/fixture.schema.json. A file holds one fixture object or
// an array of them. Known upstream deviations are warnings, not errors:
//
//   - C8: a precondition.state_files value that is a JSON array (the 0.10.0
//     lifecycle fixtures pre-write agent-tracker.json that way, although the
//     schema allows only an object or null there).
//
// Beyond the schema: exactly one of action, event and steps (with a plain
// message instead of the schema's oneOf), test_id unique across the suite,
// no path placeholder other than {STATE_ROOT} and {HARNESS_ID}, and an
// action tool that is one of the eleven abstract tools (warning).
func CheckFixtures(d *Distribution, schemas *schema.Set) []Finding {
	var out []Finding
	if _, err := schemas.Compile(schema.Fixture); err != nil {
		return []Finding{{Severity: SeverityError, File: schema.Fixture, Path: "$", Gate: "fixture", Message: err.Error()}}
	}
	seen := map[string]fixtureRef{} // test_id → where it was first used
	for _, fd := range FixtureDirs {
		names, err := fs.ReadDir(d.Dist.FS, fd.Dir)
		if err != nil {
			if fd.Required || !errors.Is(err, fs.ErrNotExist) {
				out = append(out, Finding{Severity: SeverityError, File: fd.Dir + "/", Path: "$", Gate: "fixture", Message: fmt.Sprintf("cannot read the fixture folder: %v", err)})
			}
			continue
		}
		for _, e := range names {
			if e.IsDir() || filepath.Ext(e.Name()) != ".json" {
				continue
			}
			out = append(out, checkFixtureFile(d, schemas, fd.Dir+"/"+e.Name(), seen)...)
		}
	}
	return out
}

func checkFixtureFile(d *Distribution, schemas *schema.Set, rel string, seen map[string]fixtureRef) []Finding {
	raw, err := d.ReadFile(rel)
	if err != nil {
		return []Finding{{Severity: SeverityError, File: rel, Path: "$", Gate: "fixture", Message: fmt.Sprintf("cannot read: %v", err)}}
	}
	doc, f := decodeJSON(rel, raw)
	if f != nil {
		f.Gate = "fixture"
		return []Finding{*f}
	}
	src := &Source{File: rel, Doc: doc, Raw: raw}
	d.Sources[rel] = src
	var out []Finding
	switch v := doc.Value.(type) {
	case []any:
		if len(v) == 0 {
			out = append(out, at(SeverityWarning, src, "", "fixture", "the file holds no fixtures"))
		}
		for i, fx := range v {
			out = append(out, checkFixture(schemas, src, fmt.Sprintf("/%d", i), fx, seen)...)
		}
	case map[string]any:
		out = append(out, checkFixture(schemas, src, "", v, seen)...)
	default:
		out = append(out, at(SeverityError, src, "", "fixture", "a fixture file holds a fixture object or an array of fixture objects"))
	}
	src.Valid = !hasError(out)
	return out
}

// fixtureRef locates a value inside a fixture file.
type fixtureRef struct {
	src *Source
	ptr string
}

func hasError(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

func checkFixture(schemas *schema.Set, src *Source, ptr string, v any, seen map[string]fixtureRef) []Finding {
	var out []Finding
	fx, ok := v.(map[string]any)
	if !ok {
		return []Finding{at(SeverityError, src, ptr, "fixture", "a fixture is an object")}
	}
	// C8: validate a copy with array preconditions replaced by objects.
	if pre, ok := fx["precondition"].(map[string]any); ok {
		if files, ok := pre["state_files"].(map[string]any); ok {
			var patched map[string]any
			for _, k := range slices.Sorted(maps.Keys(files)) {
				if _, isArray := files[k].([]any); !isArray {
					continue
				}
				if patched == nil {
					patched = make(map[string]any, len(files))
					for k2, v2 := range files {
						patched[k2] = v2
					}
				}
				patched[k] = map[string]any{}
				f := at(SeverityWarning, src, ptr+"/precondition/state_files/"+escapeToken(k), "fixture",
					"precondition value is a JSON array, but fixture.schema.json allows only an object or null here (known upstream deviation C8; runners write any JSON value)")
				f.Upstream = "C8"
				out = append(out, f)
			}
			if patched != nil {
				fx = shallowWith(fx, "precondition", shallowWith(pre, "state_files", patched))
			}
		}
	}
	out = append(out, exactlyOne(src, ptr, fx, []string{"action", "event", "steps"})...)
	if steps, ok := fx["steps"].([]any); ok {
		for i, st := range steps {
			if m, ok := st.(map[string]any); ok {
				out = append(out, exactlyOne(src, fmt.Sprintf("%s/steps/%d", ptr, i), m, []string{"action", "event"})...)
			}
		}
	}
	problems, err := schemas.Validate(schema.Fixture, fx)
	if err != nil {
		return append(out, at(SeverityError, src, ptr, "fixture", "%v", err))
	}
	for _, p := range problems {
		// exactlyOne said it in words; drop the schema's bare oneOf.
		if strings.HasPrefix(p.Message, "'oneOf' failed") {
			if replacedOneOf(out, src, ptr+p.Pointer) {
				continue
			}
		}
		out = append(out, schemaFinding(src, ptr, p, "fixture"))
	}
	if id, ok := fx["test_id"].(string); ok {
		if first, dup := seen[id]; dup {
			pos := first.src.PosOf(first.ptr)
			out = append(out, at(SeverityError, src, ptr+"/test_id", "fixture", "test_id %q is already used at %s:%d; results are reported by test_id", id, first.src.File, pos.Line))
		} else {
			// Positions are looked up only for a duplicate: computing them
			// means parsing the file a second time.
			seen[id] = fixtureRef{src, ptr + "/test_id"}
		}
	}
	out = append(out, checkPlaceholders(src, ptr, fx)...)
	if a, ok := fx["action"].(map[string]any); ok {
		out = append(out, checkTool(src, ptr+"/action/tool", a)...)
	}
	if steps, ok := fx["steps"].([]any); ok {
		for i, st := range steps {
			if a, ok := field(st, "action").(map[string]any); ok {
				out = append(out, checkTool(src, fmt.Sprintf("%s/steps/%d/action/tool", ptr, i), a)...)
			}
		}
	}
	return out
}

func shallowWith(m map[string]any, key string, v any) map[string]any {
	c := make(map[string]any, len(m))
	for k, x := range m {
		c[k] = x
	}
	c[key] = v
	return c
}

func exactlyOne(src *Source, ptr string, m map[string]any, keys []string) []Finding {
	var have []string
	for _, k := range keys {
		if _, ok := m[k]; ok {
			have = append(have, k)
		}
	}
	if len(have) == 1 {
		return nil
	}
	what := "a fixture"
	if strings.Contains(ptr, "/steps/") {
		what = "a step"
	}
	msg := fmt.Sprintf("%s needs exactly one of %s; it has none", what, strings.Join(keys, ", "))
	if len(have) > 1 {
		msg = fmt.Sprintf("%s needs exactly one of %s; it has %s", what, strings.Join(keys, ", "), strings.Join(have, " and "))
	}
	return []Finding{at(SeverityError, src, ptr, "fixture", "%s", msg)}
}

func replacedOneOf(out []Finding, src *Source, ptr string) bool {
	path := PointerToPath(ptr)
	for _, f := range out {
		if f.File == src.File && f.Path == path && strings.Contains(f.Message, "needs exactly one of") {
			return true
		}
	}
	return false
}

// checkPlaceholders reports path keys with a {TOKEN} other than the two a
// runner substitutes.
func checkPlaceholders(src *Source, ptr string, fx map[string]any) []Finding {
	var out []Finding
	check := func(p string, files any) {
		m, _ := files.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			for _, tok := range placeholderToken().FindAllString(k, -1) {
				if tok != "{STATE_ROOT}" && tok != "{HARNESS_ID}" {
					out = append(out, at(SeverityError, src, p+"/"+escapeToken(k), "fixture",
						"path placeholder %s is not one of {STATE_ROOT} and {HARNESS_ID}", tok))
				}
			}
		}
	}
	check(ptr+"/precondition/state_files", field(fx["precondition"], "state_files"))
	check(ptr+"/postcondition/state_files", field(fx["postcondition"], "state_files"))
	if steps, ok := fx["steps"].([]any); ok {
		for i, st := range steps {
			check(fmt.Sprintf("%s/steps/%d/assert_state", ptr, i), field(st, "assert_state"))
		}
	}
	return out
}

func checkTool(src *Source, ptr string, action map[string]any) []Finding {
	tool, ok := action["tool"].(string)
	if !ok || AbstractTools[tool] {
		return nil
	}
	return []Finding{at(SeverityWarning, src, ptr, "fixture",
		"tool %q is not one of the eleven nexus-core tools; a runner cannot call it (use the abstract name, without a harness prefix)", tool)}
}
