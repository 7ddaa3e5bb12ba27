package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

func newTagsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "tags", Short: "Inspect the bracket tags of the nexus-core distribution"}
	cmd.AddCommand(&cobra.Command{
		Use:   "explain PROMPT",
		Short: "Show which tags a user message would fire, what each would do, and why others are ignored",
		Long: `Show which bracket tags a user message would fire and what each would do, without doing it:
skill tags name the skill body that would be injected; inline actions say what nexus would
carry out ([d] names the plan issue the decision would go to, [rule:NAME] the file it would
write). Tokens that do not fire say why (inside code or quotes, unknown tag, variant not
allowed, replaced by a later skill tag).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Assembled as the hook is, so [m] and [m:gc] say what they would do.
			h, err := harnessFor(cmd.Context(), a, compose.HarnessOptions{})
			if err != nil {
				return err
			}
			if h.MemoryErr != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "nexus: memory features are off:", h.MemoryErr)
			}
			lc := h.Lifecycle
			xs := lc.Explain(args[0])
			if a.jsonOut {
				if xs == nil {
					xs = []lifecycle.Explanation{}
				}
				return writeJSON(cmd.OutOrStdout(), map[string]any{"prompt": args[0], "tags": xs})
			}
			if len(xs) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no bracket tags: the message passes through unchanged")
				return nil
			}
			for _, x := range xs {
				fmt.Fprintln(cmd.OutOrStdout(), x.String())
			}
			return nil
		},
	})
	return cmd
}
