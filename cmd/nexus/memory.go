package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/memory"
)

// autoGCReport prints what automatic memory gc after task_close did
// (stderr: over MCP stdio, stdout is the protocol).
func autoGCReport(w io.Writer) func(msg string, err error) {
	return func(msg string, err error) {
		if err != nil {
			fmt.Fprintln(w, "nexus: automatic memory gc failed:", err)
			return
		}
		fmt.Fprint(w, "nexus: ", msg)
	}
}

func newMemoryCmd(a *app) *cobra.Command {
	var nexusRoot string
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Memory lifecycle of .nexus/memory/: access records, [m] saves, [m:gc] reports and deletion",
		Long: `Inspect and manage .nexus/memory/ the way the [m] and [m:gc] tags do.

See docs/memory.md for how reads are observed, how saves merge into existing files, what the
three forgetting signals are, and how every deletion becomes a git commit.`,
	}
	cmd.PersistentFlags().StringVar(&nexusRoot, "nexus-root", "", "the .nexus folder to use (overrides runtime.root / NEXUS_RUNTIME_ROOT)")
	manager := func(ctx context.Context) (*memory.Manager, *harness.Engine, error) {
		h, err := harnessFor(ctx, a, compose.HarnessOptions{NexusRoot: nexusRoot, OnAutoGC: autoGCReport(os.Stderr)})
		if err != nil {
			return nil, nil, err
		}
		return h.Memory, h.Engine, h.MemoryErr
	}
	cmd.AddCommand(newMemoryAccessCmd(a, manager), newMemorySaveCmd(a, manager), newMemoryGCCmd(a, manager))
	return cmd
}

type managerFunc func(context.Context) (*memory.Manager, *harness.Engine, error)

func newMemoryAccessCmd(a *app, manager managerFunc) *cobra.Command {
	var merge bool
	cmd := &cobra.Command{
		Use:   "access [FILE...]",
		Short: "Print the memory access records (memory-access.jsonl)",
		Long: `Print this harness's memory access records: one per memory file read, with its read count, the
time of the last read and the agent that made it.

With --merge, the records are merged with the memory-access.jsonl files given (other harnesses'
logs, e.g. .nexus/state/<other-id>/memory-access.jsonl) by path: counts are summed and the newest
read's time and agent are kept. The merged view is only printed; nothing is written (nexus never
writes another harness's namespace, and merging into its own log would count the same reads
again on the next merge).`,
		Args: filesWithFlag(&merge, "--merge", "at least one memory-access.jsonl file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, e, err := manager(cmd.Context())
			if err != nil {
				return err
			}
			recs, err := m.Records()
			if err != nil {
				return err
			}
			if merge {
				for _, f := range args {
					if st, err := os.Stat(f); err != nil || st.IsDir() {
						return usagef("--merge %s: not a readable file", f)
					}
				}
				if recs, err = memory.MergeLogs(recs, args...); err != nil {
					return err
				}
			}
			if recs == nil {
				recs = []state.MemoryAccess{}
			}
			if a.jsonOut {
				return writeJSON(cmd.OutOrStdout(), recs)
			}
			w := cmd.OutOrStdout()
			if len(recs) == 0 {
				fmt.Fprintln(w, "no memory reads recorded yet")
				return nil
			}
			fmt.Fprintf(w, "%-50s %6s  %-24s  %s\n", "FILE", "READS", "LAST READ", "LAST AGENT")
			for _, r := range recs {
				fmt.Fprintf(w, "%-50s %6d  %-24s  %s\n", displayPath(e.Layout.Project, r.Path), r.AccessCount, r.LastAccessedTS, r.LastAgent)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&merge, "merge", false, "merge the records with the memory-access.jsonl files given as arguments (printed, not written)")
	return cmd
}

func newMemorySaveCmd(a *app, manager managerFunc) *cobra.Command {
	var category, topic, file string
	cmd := &cobra.Command{
		Use:   "save < CONTENT",
		Short: "Store a memory (what [m] does), extending an overlapping file instead of creating a near-duplicate",
		Long: `Store a lesson in .nexus/memory/<prefix><topic-slug>.md. The content is read from standard input
(or --file). The topic is 2–4 words and becomes the file name: lowercase ASCII kebab-case, no dates
or version numbers (put those inside the file).

Before creating a file, nexus scores the new memory against the existing files of the same
category; when the best score reaches memory.merge.threshold it appends a dated section to that
file instead and says which file and why (docs/memory.md describes the score).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if category == "" || topic == "" {
				return usagef("--category and --topic are required")
			}
			var content []byte
			var err error
			if file != "" {
				// Only a regular file, without blocking, through the limit.
				content, err = safefile.ReadFile(file, memory.MaxContentBytes)
			} else {
				content, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), memory.MaxContentBytes+1))
			}
			if err != nil {
				return fmt.Errorf("read the memory content: %w", err)
			}
			m, _, err := manager(cmd.Context())
			if err != nil {
				return err
			}
			res, err := m.Save(cmd.Context(), category, topic, string(content))
			if err != nil {
				return memoryInputAsUsage(err)
			}
			if a.jsonOut {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n%s\n", res.Message, res.Path)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&category, "category", "", "memory category: empirical, external or pattern")
	f.StringVar(&topic, "topic", "", "2–4 word topic; becomes the file name")
	f.StringVar(&file, "file", "", "read the content from this file instead of standard input")
	return cmd
}

func newMemoryGCCmd(a *app, manager managerFunc) *cobra.Command {
	var del bool
	cmd := &cobra.Command{
		Use:   "gc [FILE...]",
		Short: "Report which memory files are stale (what [m:gc] does); delete chosen ones in one git commit",
		Long: `Without --delete: a report, per memory file, of its last read, read count, completed cycles and
days since the last read, size, and which of the three forgetting signals it meets
(memory.gc.min_days_since_access, memory.gc.min_cycles_since_access, memory.gc.max_access_count).
Nothing is deleted by a report. Files never read age from the commit that added them (from their
modification time when git does not know them).

With --delete FILE...: delete those memory files in one git commit that contains only these
deletions (your staged and unstaged changes stay as they were) and whose message lists the
command restoring each file. Refused, with the reason, outside a git repository or when a file
has uncommitted edits. Requires the git binary.`,
		Args: filesWithFlag(&del, "--delete", "the memory files to delete"),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, _, err := manager(cmd.Context())
			if err != nil {
				return err
			}
			if del {
				res, err := m.Delete(cmd.Context(), args)
				if err != nil {
					return memoryInputAsUsage(err)
				}
				if a.jsonOut {
					return writeJSON(cmd.OutOrStdout(), res)
				}
				fmt.Fprint(cmd.OutOrStdout(), res.Summary())
				return nil
			}
			rep, err := m.Report(cmd.Context())
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			fmt.Fprint(cmd.OutOrStdout(), rep.Text())
			return nil
		},
	}
	cmd.Flags().BoolVar(&del, "delete", false, "delete the memory files given as arguments (one git commit)")
	return cmd
}

// displayPath shows a path relative to the project when it is inside it.
func displayPath(project, p string) string {
	if rel, err := filepath.Rel(project, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// filesWithFlag is the argument check of a command whose FILE arguments
// belong to a flag (memory access --merge, memory gc --delete): files
// without the flag, or the flag without files, are usage errors.
func filesWithFlag(on *bool, flag, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if !*on && len(args) > 0 {
			return usagef("unexpected arguments %q (did you mean %s?)", args, flag)
		}
		if *on && len(args) == 0 {
			return usagef("%s needs %s", flag, what)
		}
		return nil
	}
}

// memoryInputAsUsage makes memory's bad-input errors (a topic with a date,
// a file that is not a memory file) usage errors; others stay failures.
func memoryInputAsUsage(err error) error {
	var ie *memory.InputError
	if errors.As(err, &ie) {
		return usageError{err}
	}
	return err
}
