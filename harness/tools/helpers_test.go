package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

var (
	coreOnce sync.Once
	core     *vocabulary.Core
	schemas  *schema.Set
	coreErr  error
)

// fixedNow is the clock of every test engine.
var fixedNow = time.Date(2026, 4, 16, 8, 52, 55, 250_000_000, time.UTC)

const fixedStamp = "2026-04-16T08:52:55.250Z"

// newEngine returns an engine over a fresh project (the distribution and
// its compiled schemas are shared, as the conformance runner shares them).
func newEngine(t testing.TB) (*harness.Engine, string) {
	t.Helper()
	coreOnce.Do(func() {
		core, coreErr = vocabulary.LoadManifest(testenv.CoreDir(t))
		if coreErr == nil {
			schemas = schema.NewCoreSet(core.Dir)
		}
	})
	if coreErr != nil {
		t.Fatal(coreErr)
	}
	proj := t.TempDir()
	e, err := harness.New(harness.Options{
		Project: proj,
		Core:    core,
		Schemas: schemas,
		Now:     func() time.Time { return fixedNow },
		Branch:  func() string { return "main" },
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, proj
}

// files maps project-relative paths to contents; nil means "absent".
type files map[string]any

func putFiles(t testing.TB, proj string, fs files) {
	t.Helper()
	for rel, v := range fs {
		p := filepath.Join(proj, rel)
		if v == nil {
			os.Remove(p)
			continue
		}
		var b []byte
		switch x := v.(type) {
		case string:
			b = []byte(x)
		default:
			var err error
			if b, err = json.MarshalIndent(x, "", "  "); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readJSON(t testing.TB, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// snapshot returns every regular file under dir (locks excluded: taking a
// lock may create its sidecar, and .nexus/.gitignore, which the first
// write of any kind, a lock included, writes when missing).
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".lock") || strings.HasSuffix(p, filepath.Join(".nexus", ".gitignore")) {
			return nil
		}
		b, _ := os.ReadFile(p)
		out[p] = string(b)
		return nil
	})
	return out
}

var pathToken = regexp.MustCompile(`\.([A-Za-z_][A-Za-z0-9_]*)|\[(-?\d+)\]`)

// get evaluates a small path ($.a.b[0], $.a.length) over a JSON value.
func get(v any, path string) (any, bool) {
	rest := strings.TrimPrefix(path, "$")
	for _, m := range pathToken.FindAllStringSubmatch(rest, -1) {
		switch {
		case m[1] != "":
			if arr, ok := v.([]any); ok && m[1] == "length" {
				v = float64(len(arr))
				continue
			}
			obj, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = obj[m[1]]; !ok {
				return nil, false
			}
		default:
			arr, ok := v.([]any)
			if !ok {
				return nil, false
			}
			i, _ := strconv.Atoi(m[2])
			if i < 0 {
				i += len(arr)
			}
			if i < 0 || i >= len(arr) {
				return nil, false
			}
			v = arr[i]
		}
	}
	return v, true
}

// absent is an expectation that a path has no value.
type absentT struct{}

var absent = absentT{}

// check compares every path of want against v. Numbers compare as float64.
func check(t testing.TB, what string, v any, want map[string]any) {
	t.Helper()
	for path, exp := range want {
		got, ok := get(v, path)
		if exp == absent {
			if ok {
				t.Errorf("%s %s = %v, want absent", what, path, got)
			}
			continue
		}
		if !ok {
			t.Errorf("%s %s is absent, want %v", what, path, exp)
			continue
		}
		exp = normalize(exp)
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%s %s = %#v, want %#v", what, path, got, exp)
		}
	}
}

func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	json.Unmarshal(b, &out)
	return out
}

// call runs a tool; a domain error is returned as its message.
func call(t testing.TB, e *harness.Engine, name string, args map[string]any) (map[string]any, string) {
	t.Helper()
	res, err := e.CallTool(context.Background(), name, args)
	if err != nil {
		var te *tools.Error
		if !errors.As(err, &te) {
			t.Fatalf("%s: internal error (want a result or a *tools.Error): %v", name, err)
		}
		return nil, te.Message
	}
	return res, ""
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
