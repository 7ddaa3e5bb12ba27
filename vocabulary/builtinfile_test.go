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

// The version built in passes the version gate's pattern: CheckVersion
// skips the pattern for it.
func TestBuiltinVersionSupported(t *testing.T) {
	if !supportedVersion().MatchString(BuiltinVersion) {
		t.Fatalf("the built-in version %s is outside %s", BuiltinVersion, SupportedRange)
	}
}

func TestReadHead(t *testing.T) {
	for _, c := range []struct {
		in, version, contract string
		err                   bool
	}{
		{`{"nexus_core_version":"0.10.0","schema_contract_version":"2.0","agents":[1,2]}`, "0.10.0", "2.0", false},
		{`{"agents":{"a":[1,{"b":"c"}]},"schema_contract_version":"2.0","nexus_core_version":"0.11.1"}`, "0.11.1", "2.0", false},
		{`{"nexus_core_version":"0.10.0"}`, "0.10.0", "", false},
		{`{"nexus_core_version":10}`, "", "", true},
		{`{"nexus_core_version":"0.10.0","schema_contract_version":`, "", "", true},
		{`[]`, "", "", true},
		{`{"agents":[1,2`, "", "", true},
	} {
		m, err := readHead([]byte(c.in))
		if (err != nil) != c.err {
			t.Errorf("%s: error %v", c.in, err)
			continue
		}
		if err == nil && (m.NexusCoreVersion != c.version || m.SchemaContractVersion != c.contract) {
			t.Errorf("%s: %q %q", c.in, m.NexusCoreVersion, m.SchemaContractVersion)
		}
	}
}
