package vocabulary

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/schema"
)

// Every schema of the built-in distribution is valid against its
// metaschema: that is what lets schema.NewCoreSetKnown compile a file
// BuiltinFile recognises without checking it again.
func TestBuiltinSchemasAreValid(t *testing.T) {
	d := Builtin()
	set := schema.NewCoreSetFS(d.FS) // checks every file it loads
	n := 0
	err := fs.WalkDir(d.FS, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".schema.json") {
			return err
		}
		n++
		if _, err := set.Compile(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		return nil
	})
	if err != nil || n < 12 {
		t.Fatalf("walked %d schemas: %v", n, err)
	}
}

func TestBuiltinFile(t *testing.T) {
	raw, err := fs.ReadFile(Builtin().FS, "conformance/state-schemas/agent-tracker.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !BuiltinFile("conformance/state-schemas/agent-tracker.schema.json", raw) {
		t.Error("the built-in file is not recognised")
	}
	changed := append([]byte(nil), raw...)
	changed[len(changed)/2] ^= 1
	for _, c := range []struct {
		rel string
		raw []byte
	}{
		{"conformance/state-schemas/agent-tracker.schema.json", changed},
		{"conformance/state-schemas/agent-tracker.schema.json", raw[:len(raw)-1]},
		{"conformance/state-schemas/plan.schema.json", raw},
		{"no/such.schema.json", raw},
	} {
		if BuiltinFile(c.rel, c.raw) {
			t.Errorf("%s with %d bytes is taken for the built-in file", c.rel, len(c.raw))
		}
	}
}
