package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/harness/host/hosts"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

func newTagsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "tags", Short: "Inspect the bracket tags of the nexus-core distribution"}
	var hostName string
	explain := &cobra.Command{
		Use:   "explain PROMPT",
		Short: "Show which tags a user message would fire, what each would do, and why others are ignored",
		Long: `Show which bracket tags a user message would fire and what each would do, without doing it.

The message runs through the very code of the UserPromptSubmit hook, on a copy of the project's
state that writes nothing: skill tags name the skill body the hook injects; each inline action
([d], [m], [m:gc], [rule]) gives the answer the hook would give having run it, e.g. the memory
file [m] would save to, or why it would save nothing. Tokens that do not fire say why (inside
code or quotes, unknown tag, variant not allowed, replaced by a later skill tag). Plugins
subscribed to user messages are not run. --json also gives the hook's whole reply (the
context for the model and the notice for the user) in the host's wording (--host).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			hh, err := hosts.Lookup(hostName)
			if err != nil {
				return usagef("--host: %v", err)
			}
			a.host = hh
			// Assembled as the hook is, on a store that writes nothing, so
			// each tag's outcome is what the hook would do.
			h, err := harnessFor(cmd.Context(), a, compose.HarnessOptions{DryRun: true})
			if err != nil {
				return err
			}
			if h.MemoryErr != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "nexus: memory features are off:", h.MemoryErr)
			}
			xs, reply, err := h.Lifecycle.Explain(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if a.jsonOut {
				if xs == nil {
					xs = []lifecycle.Explanation{}
				}
				return writeJSON(cmd.OutOrStdout(), map[string]any{"prompt": args[0], "tags": xs, "reply": reply})
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
	}
	explain.Flags().StringVar(&hostName, "host", "claude", "the host whose hook runs the message: "+strings.Join(hosts.Names(), " or ")+" (its tool and agent names)")
	cmd.AddCommand(explain)
	return cmd
}
