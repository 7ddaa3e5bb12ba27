package main

import (
	"bytes"
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestHelpGolden: nexus-plugins' usage and each command's -h match
// testdata/help, so a change to them is reviewed (-update rewrites them).
// (`nexus-plugins decision -- --help` is the store's command line's help,
// whose goldens are in plugins/decisions/cli.)
func TestHelpGolden(t *testing.T) {
	dir := filepath.Join("testdata", "help")
	for _, args := range [][]string{{"--help"}, {"decision", "-h"}, {"hook-server", "-h"}} {
		name := strings.Join(append([]string{"nexus-plugins"}, args[:len(args)-1]...), "_") + ".txt"
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(args, io.NopCloser(strings.NewReader("")), &out, &errb); code != 0 {
				t.Fatalf("exit %d", code)
			}
			got := out.String() + errb.String() // the flag package prints a command's usage on stderr
			testenv.Golden(t, filepath.Join(dir, name), []byte(got), *update)
		})
	}
}
