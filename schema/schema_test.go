package schema

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/nexus-harness/nexus/internal/testenv"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCoreSchemas(t *testing.T) {
	set := NewCoreSet(testenv.CoreDir(t))
	tests := []struct {
		name, loc, doc string
		want           []string // substrings, one per expected problem; empty = valid
	}{
		{"tag ok", Vocabulary + "#/$defs/tagFile",
			`{"tags":[{"id":"plan","trigger":"[plan]","type":"skill","skill":"nx-plan","description":"d"}]}`, nil},
		{"tag id pattern through cross-file ref", Vocabulary + "#/$defs/tagFile",
			`{"tags":[{"id":"Plan_X","trigger":"[plan]","type":"skill","skill":"nx-plan","description":"d"}]}`,
			[]string{"/tags/0/id: 'Plan_X' does not match pattern"}},
		{"skill tag needs skill", Vocabulary + "#/$defs/tagFile",
			`{"tags":[{"id":"plan","trigger":"[plan]","type":"skill","description":"d"}]}`,
			[]string{"/tags/0: missing property 'skill'"}},
		{"unknown key", Agent,
			`{"id":"a","name":"a","description":"d","category":"how","capabilities":[],"resume_tier":"bounded","model_tier":"high","colour":"red"}`,
			[]string{"additional properties 'colour' not allowed"}},
		{"date-time asserted", StatePlan,
			`{"id":1,"topic":"t","issues":[],"created_at":"2026-11-25 10:00"}`,
			[]string{"/created_at: "}},
		{"history plan oneOf picks the object branch", StateHistory,
			`{"cycles":[{"schema_version":"0.5","completed_at":"2026-01-01T00:00:00.000Z","branch":"main","plan":{"id":1,"topic":"t","issues":[],"created_at":"2026-01-01T00:00:00Z","extra":1},"tasks":[]}]}`,
			[]string{"/cycles/0/plan: additional properties 'extra' not allowed"}},
		{"memory access absolute id", StateMemory,
			`{"path":"/p/.nexus/memory/x.md","last_accessed_ts":"2026-01-01T00:00:00Z","access_count":1.5,"last_agent":"a"}`,
			[]string{"/access_count: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := set.Validate(tt.loc, decode(t, tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != len(tt.want) {
				t.Fatalf("got %d problems %q, want %d", len(ps), Join(ps), len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(ps[i].String(), w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, ps[i], w)
				}
				if strings.Contains(ps[i].Message, "validation failed") {
					t.Errorf("problem %d has the library's generic message: %q", i, ps[i])
				}
			}
		})
	}
}

func TestExternalRefRefused(t *testing.T) {
	fsys := fstest.MapFS{"a.json": {Data: []byte(`{"$ref":"https://example.com/x.json"}`)}}
	_, err := NewSet("https://nexus.test/", fsys).Compile("a.json")
	if err == nil || !strings.Contains(err.Error(), "external references are not fetched") {
		t.Fatalf("err = %v", err)
	}
}

func BenchmarkCompileAndValidateTracker(b *testing.B) {
	dir := testenv.CoreDir(b)
	v := []any{map[string]any{"harness_id": "nexus", "started_at": "2026-01-01T00:00:00.000Z"}}
	for i := 0; i < b.N; i++ {
		set := NewCoreSet(dir)
		if ps, err := set.Validate(StateTracker, v); err != nil || len(ps) > 0 {
			b.Fatal(err, ps)
		}
	}
}

// A file known valid is compiled without the metaschema check; any other
// is checked as always. The same schema, invalid against the metaschema
// ("type": 5), is refused when not known and accepted unchecked when known,
// which shows that the check is what known skips.
func TestKnownSchemasSkipTheMetaschema(t *testing.T) {
	fsys := fstest.MapFS{
		"known.json":   {Data: []byte(`{"type":"object","properties":{"n":{"type":5}}}`)},
		"unknown.json": {Data: []byte(`{"type":"object","properties":{"n":{"type":5}}}`)},
	}
	var asked []string
	set := NewCoreSetKnown(fsys, func(rel string, raw []byte) bool {
		asked = append(asked, rel)
		return rel == "known.json" && string(raw) == string(fsys["known.json"].Data)
	})
	if _, err := set.Compile("unknown.json"); err == nil || !strings.Contains(err.Error(), "is not valid against metaschema") {
		t.Fatalf("an unknown file invalid against the metaschema: %v", err)
	}
	if _, err := set.Compile("known.json"); err != nil {
		t.Fatalf("a known file was checked against the metaschema: %v", err)
	}
	if strings.Join(asked, " ") != "unknown.json known.json" {
		t.Errorf("known was asked about %v", asked)
	}
}

// The state schema a hook compiles, known valid, costs no metaschema.
func BenchmarkCompileAndValidateTrackerKnown(b *testing.B) {
	dir := testenv.CoreDir(b)
	v := []any{map[string]any{"harness_id": "nexus", "started_at": "2026-01-01T00:00:00.000Z"}}
	for i := 0; i < b.N; i++ {
		set := NewCoreSetKnown(NewCoreSet(dir).fsys, func(string, []byte) bool { return true })
		if ps, err := set.Validate(StateTracker, v); err != nil || len(ps) > 0 {
			b.Fatal(err, ps)
		}
	}
}
