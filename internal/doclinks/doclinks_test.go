package doclinks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// TestDocLinks (issue 26): every link in README.md and docs/ resolves
// inside the repository (a file that exists; an anchor one of its
// headings makes) or to a public URL, and no page names a path of one
// machine.
func TestDocLinks(t *testing.T) {
	problems, err := Check(testenv.ModuleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheckFinds: each kind of broken link is found, and good ones pass.
func TestCheckFinds(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755)
		os.WriteFile(filepath.Join(root, rel), []byte(s), 0o644)
	}
	write("README.md", "# Title\n\nSee [a](docs/a.md#the-part-one), [b](docs/a.md#nope), [c](docs/gone.md), [d](../shared/spec.md), [e](/etc/x),\n"+
		"[f](https://example.com/x), [g](http://localhost:8080), [h](#title), `[not](a link)`.\nThe spec is shared/spec/x.md.\n")
	write("docs/a.md", "## The part: one\n\n```\n[x](nowhere.md)\n# not a heading\n```\nRun /work/shared/x here.\n[up](../README.md#title)\n")
	problems, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	for _, want := range []string{
		"README.md:3: link docs/a.md#nope: docs/a.md has no heading with the anchor #nope",
		"README.md:3: link docs/gone.md: docs/gone.md does not exist",
		"README.md:3: link ../shared/spec.md leads out of the repository",
		"README.md:3: link /etc/x is an absolute path",
		"README.md:4: link http://localhost:8080 is not a public URL",
		"docs/a.md:7: names a path of one machine",
		"README.md:5: names shared/spec, which is not in the repository",
	} {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, want)
		}
		if !found {
			t.Errorf("not found: %s\nin %s", want, strings.Join(got, "\n"))
		}
	}
	if len(got) != 8 { // the ../shared link is also text naming ../shared
		t.Errorf("%d problems, want 8:\n%s", len(got), strings.Join(got, "\n"))
	}
}
