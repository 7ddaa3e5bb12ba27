package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/internal/state"
)

func newStateCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "state", Short: "Inspect and repair the .nexus state files"}
	var nexusRoot string
	repair := &cobra.Command{
		Use:   "repair",
		Short: "Move corrupt state files aside to <name>.corrupt-<timestamp>",
		Long: `Check plan.json, tasks.json, history.json and this harness's agent-tracker.json. A file that is
not valid JSON or does not match its nexus-core schema is renamed to <name>.corrupt-<timestamp>
(nothing is deleted), so the tools can start afresh. Healthy files are left alone.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := harnessFor(cmd.Context(), a, compose.HarnessOptions{NexusRoot: nexusRoot})
			if err != nil {
				return err
			}
			moved, err := h.Engine.Store.Repair(cmd.Context())
			if a.jsonOut {
				if moved == nil {
					moved = []state.Moved{}
				}
				if jerr := writeJSON(cmd.OutOrStdout(), map[string]any{"moved": moved}); jerr != nil {
					return jerr
				}
				return err
			}
			w := cmd.OutOrStdout()
			for _, m := range moved {
				fmt.Fprintf(w, "moved %s -> %s (%s)\n", m.Path, m.MovedTo, m.Reason)
			}
			if err != nil {
				return err
			}
			if len(moved) == 0 {
				fmt.Fprintln(w, "nothing to repair: every state file is valid")
			}
			return nil
		},
	}
	repair.Flags().StringVar(&nexusRoot, "nexus-root", "", "the .nexus folder to repair (overrides runtime.root / NEXUS_RUNTIME_ROOT)")
	cmd.AddCommand(repair)
	return cmd
}
