package main

import (
	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/plugins/decisions/cli"
)

// `nexus decision` runs the decision store in-process: a CLI call has no
// MCP client to serve, so it does not pay for launching the plugin.
func init() {
	register(func(a *app) *cobra.Command {
		return cli.NewCommand(cli.Options{
			Prepare: func(o *cli.Options) error {
				cfg, err := a.Config()
				if err != nil {
					return err
				}
				o.Frontmatter = cfg.String("decisions.frontmatter")
				if h := cfg.String("decisions.nauro_home"); h != "" {
					o.Home = h
				}
				if a.projectFlag != "" {
					proj, err := a.Project()
					if err != nil {
						return err
					}
					o.Dir = proj
				}
				return nil
			},
		})
	})
}
