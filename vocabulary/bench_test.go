package vocabulary

import (
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

// BenchmarkValidate measures one `nexus validate` worth of work: a fresh
// schema set (compiled from scratch, as in a new process) and every check.
func BenchmarkValidate(b *testing.B) {
	dir := testenv.CoreDir(b)
	for b.Loop() {
		if r := Validate(dir, schema.NewCoreSet(dir)); !r.OK() {
			b.Fatalf("%d errors", r.Errors)
		}
	}
}

// BenchmarkValidateWarm reuses compiled schemas: the checks alone.
func BenchmarkValidateWarm(b *testing.B) {
	dir := testenv.CoreDir(b)
	set := schema.NewCoreSet(dir)
	for b.Loop() {
		if r := Validate(dir, set); !r.OK() {
			b.Fatalf("%d errors", r.Errors)
		}
	}
}
