package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/vocabulary"
)

func newCoreCmd(*app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "core",
		Short: "The nexus-core distribution built into nexus",
	}
	var force bool
	extract := &cobra.Command{
		Use:   "extract DIR",
		Short: "Write the built-in nexus-core distribution into DIR, byte for byte",
		Long: fmt.Sprintf(`Write every file of the nexus-core %s distribution built into nexus beneath DIR (created
when missing), byte for byte: to read it, to hand it to another harness, or to edit a copy and
point --core, NEXUS_CORE_DIR or core.dir at it.

Nothing is written outside DIR, whatever symbolic links it holds. The destination is checked
whole before anything is written: a symbolic link on the way to a file or in its place, or a
file where a folder goes, is refused naming it (with --force too). When any of the files already
exists nothing is written and the command fails; --force replaces them (each atomically).

Exit status: 0 on success, 1 when a file could not be written or already exists, 2 when nexus
was called wrongly.`, vocabulary.BuiltinVersion),
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("core extract takes exactly one argument, the folder to write into")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := vocabulary.Extract(vocabulary.Builtin(), args[0], force)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d files of nexus-core %s to %s\n", n, vocabulary.BuiltinVersion, args[0])
			return nil
		},
	}
	extract.Flags().BoolVar(&force, "force", false, "overwrite files that already exist")
	cmd.AddCommand(extract)
	return cmd
}
