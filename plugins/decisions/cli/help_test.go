package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestHelpGolden: `nexus decision --help` and every subcommand's, as Run
// prints them for nexus decision, match testdata/help, so a change to a
// help text is seen and reviewed (-update rewrites them). The command tree
// is walked, so a new subcommand cannot be missed.
func TestHelpGolden(t *testing.T) {
	paths := [][]string{nil}
	for _, c := range NewCommand(Options{}).Commands() {
		if c.IsAvailableCommand() {
			paths = append(paths, []string{c.Name()})
		}
	}
	dir := filepath.Join("testdata", "help")
	for _, p := range paths {
		name := strings.Join(append([]string{"nexus_decision"}, p...), "_") + ".txt"
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := Run(append(append([]string(nil), p...), "--help"), Options{Stdout: &out, Stderr: &errb}); code != 0 || errb.Len() > 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			golden := filepath.Join(dir, name)
			if *update {
				os.MkdirAll(dir, 0o755)
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -run TestHelpGolden -update writes it)", err)
			}
			if out.String() != string(want) {
				t.Errorf("help changed (review it, then -update):\n%s\nwant\n%s", out.String(), want)
			}
		})
	}
}
