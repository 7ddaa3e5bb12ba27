package conformance_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/conformance"
	"github.com/nexus-harness/nexus/conformance/nexustarget"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

func newRunner(t testing.TB) (*conformance.Runner, *schema.Set) {
	t.Helper()
	core := testenv.CoreDir(t)
	schemas := schema.NewCoreSet(core)
	f, err := nexustarget.New(core, schemas)
	if err != nil {
		t.Fatal(err)
	}
	r, err := conformance.NewRunner(conformance.Options{Factory: f, Schemas: schemas, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return r, schemas
}

func load(t testing.TB, schemas *schema.Set, sources ...conformance.Source) *conformance.Suite {
	t.Helper()
	suite, err := conformance.Load(schemas, sources...)
	if err != nil {
		t.Fatal(err)
	}
	return suite
}

// TestSuite runs nexus-core 0.10.0's 46 cases and our scenarios against
// nexus in-process, one subtest per test_id.
func TestSuite(t *testing.T) {
	r, schemas := newRunner(t)
	core := testenv.CoreDir(t)
	sources := append(coreSources(core), conformance.DirSources(filepath.Join("testdata", "scenarios"))...)
	suite := load(t, schemas, sources...)

	upstream, ours := 0, 0
	for _, c := range suite.Cases {
		switch {
		case strings.HasPrefix(c.Source, "tools/") || strings.HasPrefix(c.Source, "lifecycle/"):
			upstream++
		case strings.HasPrefix(c.Source, "testdata/"):
			ours++
		}
	}
	if upstream != 44 {
		t.Errorf("loaded %d tools/ and lifecycle/ cases, want the 44 of nexus-core 0.10.0", upstream)
	}
	if ours < 6 {
		t.Errorf("loaded %d scenario fixtures from testdata/scenarios, want at least 6", ours)
	}
	for _, c := range suite.Cases {
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			res := r.RunCase(context.Background(), c)
			for _, n := range res.Notes {
				t.Log("note: " + n)
			}
			switch res.Status {
			case conformance.Fail:
				for _, f := range res.Failures {
					t.Error(f.String())
				}
			case conformance.Skip:
				// nexus in-process fires lifecycle events: nothing may skip.
				t.Errorf("skipped: %s", res.SkipReason)
			}
		})
	}
}

// TestBrokenFixturesFail proves the runner cannot be talked into passing a
// wrong fixture: each one in testdata/broken must fail, for its reason.
func TestBrokenFixturesFail(t *testing.T) {
	r, schemas := newRunner(t)
	suite := load(t, schemas, conformance.DirSources(filepath.Join("testdata", "broken"))[0])
	want := map[string]string{
		"broken_unknown_matcher_key":            `unknown key "equals" for type boolean`,
		"broken_unknown_matcher_type":           `fixture does not match conformance/schema/fixture.schema.json`,
		"broken_wrong_expected_value":           `return $.active: expected true, got false`,
		"broken_wrong_state_value":              `.nexus/state/plan.json $.issues.length: expected 3, got 2`,
		"broken_unknown_placeholder":            `unknown placeholder {SESSION_ID}`,
		"broken_expects_error_that_never_comes": `error: expected an error, got {"exists":false}`,
		"broken_step_value":                     `step 2: return $.task.id: expected 1, got 2`,
		"broken_unsupported_pattern":            `is not supported`,
	}
	if len(suite.Cases) != len(want) {
		t.Fatalf("%d broken fixtures, the test knows %d", len(suite.Cases), len(want))
	}
	for _, res := range r.Run(context.Background(), suite.Cases, nil) {
		t.Run(res.ID, func(t *testing.T) {
			var text []string
			for _, f := range res.Failures {
				text = append(text, f.String())
			}
			if res.Status != conformance.Fail {
				t.Fatalf("status %s, want FAIL", res.Status)
			}
			if w := want[res.ID]; !strings.Contains(strings.Join(text, "\n"), w) {
				t.Fatalf("failures:\n%s\ndo not mention %q", strings.Join(text, "\n"), w)
			}
		})
	}
}

// BenchmarkSuiteInProcess measures one full in-process run of the
// distribution's cases (46 for 0.10.0), loading included, with the
// command's defaults (GOMAXPROCS workers). The schema set and the
// distribution are shared across iterations, as they are within one run.
func BenchmarkSuiteInProcess(b *testing.B) {
	core := testenv.CoreDir(b)
	schemas := schema.NewCoreSet(core)
	f, err := nexustarget.New(core, schemas)
	if err != nil {
		b.Fatal(err)
	}
	// Scratch projects go where the command puts them (ScratchDir).
	r, err := conformance.NewRunner(conformance.Options{Factory: f, Schemas: schemas})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		suite, err := conformance.Load(schemas, coreSources(core)...)
		if err != nil {
			b.Fatal(err)
		}
		for _, res := range r.Run(context.Background(), suite.Cases, nil) {
			if res.Status == conformance.Fail {
				b.Fatalf("%s failed: %v", res.ID, res.Failures)
			}
		}
	}
}

func coreSources(dir string) []conformance.Source {
	d := vocabulary.DirDist(dir, "")
	return conformance.CoreSources(d.FS, d.File)
}
