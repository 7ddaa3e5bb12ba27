package vocabulary

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

// checkReport fails on findings a reader could not act on.
func checkReport(t *testing.T, r *Report) {
	t.Helper()
	errs := 0
	for _, f := range r.Findings {
		if f.File == "" || f.Line < 1 || f.Col < 1 || f.Path == "" || f.Path[0] != '$' || f.Message == "" {
			t.Fatalf("malformed finding %+v", f)
		}
		if f.Severity == SeverityError {
			errs++
		}
	}
	if errs != r.Errors || len(r.Findings) != r.Errors+r.Warnings {
		t.Fatalf("counts %d/%d for %d findings", r.Errors, r.Warnings, len(r.Findings))
	}
}

// copyParts copies the named files and folders of the shared distribution
// into a temp dir.
func copyParts(t testing.TB, parts ...string) string {
	t.Helper()
	src := testenv.CoreDir(t)
	dst := filepath.Join(t.TempDir(), "core")
	for _, part := range parts {
		root := filepath.Join(src, filepath.FromSlash(part))
		err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, path)
			target := filepath.Join(dst, rel)
			if e.IsDir() {
				return os.MkdirAll(target, 0o755)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// fuzzFile overwrites one file of a small private distribution (rel plus
// the parts it is judged against) with the fuzzer's bytes, then runs the
// manifest loader and the whole validator. The distribution is kept small
// because every execution walks all of it.
func fuzzFile(f *testing.F, rel string, parts ...string) {
	seed, err := os.ReadFile(filepath.Join(testenv.CoreDir(f), filepath.FromSlash(rel)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Add([]byte("{}"))
	f.Add([]byte("[1, 2]"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("id: 1\nid: 2\n"))
	f.Add([]byte(`{"nexus_core_version": "0.10.0", "schema_contract_version": "2.0", "agents": [{"id": 5}], "skills": null, "vocabulary": []}`))
	dir := copyParts(f, append([]string{rel, "schema", "conformance/schema"}, parts...)...)
	schemas := schema.NewCoreSet(dir)
	path := filepath.Join(dir, filepath.FromSlash(rel))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if c, err := LoadManifest(dir); err == nil && c.Manifest() == nil {
			t.Fatal("LoadManifest returned no manifest and no error")
		}
		checkReport(t, Validate(dir, schemas))
	})
}

func FuzzManifest(f *testing.F) {
	fuzzFile(f, "manifest.json", "vocabulary", "agents/engineer", "skills/nx-plan")
}

func FuzzAgentMeta(f *testing.F) {
	fuzzFile(f, "agents/engineer/meta.yml", "manifest.json", "vocabulary", "agents/engineer/body.md")
}

func FuzzTags(f *testing.F) {
	fuzzFile(f, "vocabulary/tags.yml", "manifest.json", "skills/nx-plan/meta.yml")
}

func FuzzFixture(f *testing.F) {
	fuzzFile(f, "conformance/lifecycle/agent-spawn.json", "manifest.json")
}
