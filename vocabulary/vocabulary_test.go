package vocabulary

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
)

func TestLoadManifest(t *testing.T) {
	c, err := LoadManifest(testenv.CoreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Version() != "0.10.0" {
		t.Fatalf("version %q", c.Version())
	}
	a, ok := c.Agent("architect")
	if !ok || strings.Join(a.Capabilities, ",") != "no_file_edit,no_task_create,no_task_update" {
		t.Fatalf("architect = %+v", a)
	}
	if len(c.Tags()) != 7 {
		t.Fatalf("%d tags", len(c.Tags()))
	}
	body, err := c.ReadSkillBody("nx-plan")
	if err != nil || BodyHash([]byte(body)) != mustSkill(t, c, "nx-plan").BodyHash {
		t.Fatalf("nx-plan body hash mismatch: %v", err)
	}
}

func mustSkill(t *testing.T, c *Core, id string) *Skill {
	s, ok := c.Skill(id)
	if !ok {
		t.Fatalf("no skill %s", id)
	}
	return s
}

func TestLoadCleanDistribution(t *testing.T) {
	dir := testenv.CoreDir(t)
	d, findings := Load(dir, schema.NewCoreSet(dir))
	for _, f := range findings {
		t.Errorf("unexpected finding: %s", f)
	}
	if d == nil || len(d.Agents) != 9 || len(d.Skills) != 4 || len(d.Vocabulary.Tags) != 7 || len(d.Vocabulary.MemoryPolicy.Categories) != 3 {
		t.Fatalf("loaded %+v", d)
	}
}

func TestVersionGate(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "assets"), 0o755)
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"version":"0.13.1"}`), 0o644)
	_, err := LoadManifest(dir)
	if err == nil || !strings.Contains(err.Error(), "0.13.1") || !strings.Contains(err.Error(), SupportedRange) || !strings.Contains(err.Error(), "runtime package") {
		t.Fatalf("err = %v", err)
	}
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"nexus_core_version":"0.9.2","schema_contract_version":"2.0"}`), 0o644)
	if _, err := LoadManifest(dir); err == nil || !strings.Contains(err.Error(), "0.9.2") {
		t.Fatalf("err = %v", err)
	}
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"nexus_core_version":"0.12.3","schema_contract_version":"2.0"}`), 0o644)
	if _, err := LoadManifest(dir); err != nil {
		t.Fatalf("0.12.3 refused: %v", err)
	}
}

func TestBodyHash(t *testing.T) {
	tests := []struct{ in, want string }{
		{"x\r\n\r\n  \n", "sha256:73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac"},
		{"x\n", "sha256:73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac"},
		{"x\ufeff\u3000", "sha256:73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac"},
	}
	for _, tt := range tests {
		if got := BodyHash([]byte(tt.in)); got != tt.want {
			t.Errorf("BodyHash(%q) = %s", tt.in, got)
		}
	}
	if BodyHash([]byte("x\u0085")) == tests[0].want {
		t.Error("U+0085 must not be trimmed (ECMAScript trimEnd keeps it)")
	}
}

func TestPointerToPath(t *testing.T) {
	for in, want := range map[string]string{"": "$", "/tags/0/id": "$.tags[0].id", "/a~1b": `$["a/b"]`} {
		if got := PointerToPath(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

func TestLocate(t *testing.T) {
	core := testenv.CoreDir(t)
	if got, err := Locate(core, "--core", ""); err != nil || got.Dir != core || got.Source != "--core" {
		t.Fatalf("explicit: %+v %v", got, err)
	}
	if _, err := Locate("/nonexistent/x", "NEXUS_CORE_DIR", ""); err == nil || !strings.Contains(err.Error(), "NEXUS_CORE_DIR") {
		t.Fatalf("bad explicit path: %v", err)
	}
	proj := t.TempDir()
	sub := filepath.Join(proj, "a", "b")
	os.MkdirAll(sub, 0o755)
	// Nothing configured and no node_modules: the built-in copy, last.
	if got, err := Locate("", "", sub); err != nil || !got.IsBuiltin() || got.Source != SourceBuiltin || got.Where() != "built-in nexus-core "+BuiltinVersion {
		t.Fatalf("fallback: %+v %v", got, err)
	}
	nm := filepath.Join(proj, NodeModulesPath)
	os.MkdirAll(nm, 0o755)
	os.WriteFile(filepath.Join(nm, "VERSION"), []byte("0.10.0\n"), 0o644)
	if got, err := Locate("", "", sub); err != nil || got.Dir != nm || got.Source != "node_modules" {
		t.Fatalf("node_modules walk: %+v %v", got, err)
	}
}

// The built-in distribution is the vendored one, byte for byte, and loads,
// validates and answers like the directory.
func TestBuiltin(t *testing.T) {
	dir := testenv.CoreDir(t)
	b := Builtin()
	var files int
	err := fs.WalkDir(b.FS, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		files++
		got, err := fs.ReadFile(b.FS, p)
		if err != nil {
			return err
		}
		want, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the vendored copy", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var onDisk int
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, _ error) error {
		if e != nil && !e.IsDir() {
			onDisk++
		}
		return nil
	})
	if files != onDisk || files < 80 {
		t.Fatalf("built in: %d files, vendored: %d", files, onDisk)
	}
	c, err := LoadManifestDist(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.Version() != BuiltinVersion || c.Dir != "" {
		t.Fatalf("version %s, dir %q", c.Version(), c.Dir)
	}
	body, err := c.ReadSkillBody("nx-plan")
	if err != nil || !strings.Contains(body, "nx-plan") && len(body) < 100 {
		t.Fatalf("nx-plan body: %d bytes, %v", len(body), err)
	}
	if _, err := c.ReadAgentBody("engineer"); err != nil {
		t.Fatal(err)
	}
	r := ValidateWith(b, schema.NewCoreSetFS(b.FS), Options{})
	ref := Validate(dir, schema.NewCoreSet(dir))
	if r.Errors != 0 || r.Warnings != ref.Warnings || r.Files != ref.Files || r.Version != BuiltinVersion {
		t.Fatalf("built in: %d errors, %d warnings, %d files; directory: %d warnings, %d files", r.Errors, r.Warnings, r.Files, ref.Warnings, ref.Files)
	}
	if got := b.File("skills/nx-plan/body.md"); got != "builtin:nexus-core@"+BuiltinVersion+"/skills/nx-plan/body.md" {
		t.Errorf("File = %q", got)
	}
}

// A distribution newer than nexus supports: the error names the supported
// range, the version found, and how to go back to the built-in copy for
// each way it could have been chosen.
func TestVersionErrorSaysHowBack(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"nexus_core_version":"0.13.0","schema_contract_version":"2.0"}`), 0o644)
	for source, hint := range map[string]string{
		"--core flag":    "drop --core",
		"NEXUS_CORE_DIR": "unset NEXUS_CORE_DIR",
		"config core.dir in /p/.nexus/nexus.yaml": "remove core.dir (core.dir in /p/.nexus/nexus.yaml)",
		"node_modules": "npm uninstall @moreih29/nexus-core",
	} {
		_, err := OpenManifestDist(DirDist(dir, source))
		var ve *VersionError
		if !errors.As(err, &ve) {
			t.Fatalf("%s: %v", source, err)
		}
		for _, want := range []string{dir, "version 0.13.0", SupportedRange, hint, "built into nexus"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q lacks %q", source, err, want)
			}
		}
	}
}

func TestOpenManifestDefersDecoding(t *testing.T) {
	src := testenv.CoreDir(t)
	dir := t.TempDir()
	for _, f := range []string{"manifest.json", "VERSION"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	c, err := OpenManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.m != nil {
		t.Fatal("OpenManifest decoded the catalog eagerly")
	}
	if a, ok := c.Agent("engineer"); !ok || a.ResumeTier != "bounded" {
		t.Fatalf("engineer = %+v", a)
	}
	// A catalog that is JSON but not the right shape fails at first use.
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"nexus_core_version":"0.10.0","schema_contract_version":"2.0","agents":{"x":1}}`), 0o644)
	c, err = OpenManifest(dir)
	if err != nil {
		t.Fatalf("the header is fine, so OpenManifest succeeds: %v", err)
	}
	if _, err := LoadManifest(dir); err == nil {
		t.Fatal("LoadManifest must report the bad catalog")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("first use of a bad catalog must panic with the decoding error")
		}
	}()
	c.Tags()
}
