package pluginhost

import (
	"path/filepath"
	"testing"

	"github.com/nexus-harness/nexus/schema"
)

// BenchmarkManifestSchemaCompile: compiling the embedded manifest schema,
// paid once per process that reads manifests.
func BenchmarkManifestSchemaCompile(b *testing.B) {
	for b.Loop() {
		set := schema.NewSet("https://nexus-harness.github.io/schema/", schemaFS)
		if _, err := set.Compile("nexus-plugin.schema.json"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadManifest: reading and validating one manifest (schema
// already compiled).
func BenchmarkLoadManifest(b *testing.B) {
	file, _ := filepath.Abs("testdata/manifests/valid.yaml")
	for b.Loop() {
		if _, err := LoadManifest(file); err != nil {
			b.Fatal(err)
		}
	}
}
