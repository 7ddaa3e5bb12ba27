package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// commandTree is nexus's whole command tree, with the commands cobra adds
// only when it runs (help, completion).
func commandTree() *cobra.Command {
	root := newRootCmdFor(nil)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

// commandPaths walks the command tree nexus builds (every command, so a new
// one cannot be missed) and lists each available command's path.
func commandPaths(c *cobra.Command, path []string) [][]string {
	out := [][]string{path}
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() && sub.Name() != "help" {
			continue
		}
		out = append(out, commandPaths(sub, append(append([]string(nil), path...), sub.Name()))...)
	}
	return out
}

// TestHelpGolden: every command's --help (`nexus --help`, each command and
// subcommand) matches its golden file in testdata/help, so a change to any
// help text is seen and reviewed (go test -run TestHelpGolden -update
// rewrites them). `nexus decision`'s help is the store's command line's
// (plugins/decisions/cli has its own goldens); here it is only checked to
// reach it.
func TestHelpGolden(t *testing.T) {
	paths := commandPaths(commandTree(), nil)
	if len(paths) < 30 {
		t.Fatalf("only %d commands found: %v", len(paths), paths)
	}
	dir := filepath.Join("testdata", "help")
	seen := map[string]bool{}
	for _, p := range paths {
		name := strings.Join(append([]string{"nexus"}, p...), "_") + ".txt"
		seen[name] = true
		t.Run(strings.Join(p, " "), func(t *testing.T) {
			if len(p) == 1 && p[0] == "decision" {
				return // forwarded to nexus-plugins: TestDecisionRunsInThePluginHost
			}
			var out, errOut bytes.Buffer
			if code := run(context.Background(), append(append([]string(nil), p...), "--help"), &out, &errOut); code != 0 || errOut.Len() > 0 {
				t.Fatalf("exit %d, stderr %s", code, errOut.String())
			}
			testenv.Golden(t, filepath.Join(dir, name), out.Bytes(), *update)
		})
	}
	// A golden file of a command that is gone fails too.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !seen[e.Name()] && !*update {
			t.Errorf("%s: no such command any more; remove the file", e.Name())
		} else if !seen[e.Name()] {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
