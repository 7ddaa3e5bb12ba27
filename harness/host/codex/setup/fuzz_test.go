package setup

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// seedFiles adds the files matching a pattern under testdata as seeds.
func seedFiles(f *testing.F, pattern string) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds for %s: %v", pattern, err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzEditConfig: on any config.toml the edit either refuses (nothing
// changed) or gives a file that parses, that a second install leaves
// alone, and whose uninstall gives the user's file back byte for byte
// (give or take a final newline) when it held nothing of nexus's.
func FuzzEditConfig(f *testing.F) {
	seedFiles(f, "config/*.toml")
	f.Fuzz(func(t *testing.T, src []byte) {
		if _, err := decodeTOML(src); err != nil {
			if res, err := EditConfig(src, installEdit); err == nil || res.Changed {
				t.Fatalf("an invalid file was edited: %v", err)
			}
			return
		}
		inst, err := EditConfig(src, installEdit)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || inst.Changed || !bytes.Equal(inst.Data, src) {
				t.Fatalf("failed edit: %v, changed %v", err, inst.Changed)
			}
			return
		}
		if _, err := decodeTOML(inst.Data); err != nil {
			t.Fatalf("the install does not parse: %v\n%s", err, inst.Data)
		}
		again, err := EditConfig(inst.Data, installEdit)
		if err != nil || again.Changed {
			t.Fatalf("a second install: %v\n%s\n-->\n%s", err, inst.Data, again.Data)
		}
		un, err := EditConfig(inst.Data, uninstallEdit)
		if err != nil {
			t.Fatalf("uninstall: %v\n%s", err, inst.Data)
		}
		if !hasNexus(t, src) && !sameModuloFinalNewline(un.Data, src) {
			t.Fatalf("uninstall did not give the file back:\n got %q\nwant %q", un.Data, src)
		}
	})
}
