package main

import (
	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/harness/gate"
	"github.com/nexus-harness/nexus/harness/host"
	"github.com/nexus-harness/nexus/harness/host/hosts"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

func newValidateCmd(a *app) *cobra.Command {
	var verbose bool
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check a nexus-core distribution: schemas, cross-file gates, body hashes, fixtures",
		Long: `Check the nexus-core distribution (--core DIR, NEXUS_CORE_DIR, core.dir, node_modules, or
the copy built into nexus) the way nexus-core's own validator does, and more: every vocabulary file, meta file and the
manifest against its schema; the gates G2–G11; manifest.json against the sources and every
body_hash recomputed; every capability an agent uses enforceable with the Claude Code
capability map; every conformance fixture against fixture.schema.json; and the version gate
(nexus-core 0.10.x–0.12.x).

Prints one line per finding, "SEVERITY: FILE:LINE:COL: JSON-PATH: message [GATE]", then a
summary; --json prints the same as one document. The known deviations of nexus-core itself
(docs/validate.md) are tolerated and counted on the summary line; -v lists them too. Exit status: 0 without errors (warnings
allowed), 1 with errors, 2 when nexus was called wrongly or no distribution was found, 3
when a configuration file cannot be read or parsed.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("validate takes no arguments (pass the distribution with --core DIR)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := a.Dist()
			if err != nil {
				// Nothing to validate: the call or the setup is wrong.
				return usageError{err}
			}
			r, err := validateDistribution(d)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			switch {
			case a.jsonOut:
				err = writeJSON(w, r)
			case verbose:
				err = r.WriteText(w)
			default:
				err = r.WriteBrief(w)
			}
			if err != nil {
				return err
			}
			if !r.OK() {
				return &exitError{Code: 1, Silent: true}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "also list the known upstream deviations of nexus-core, which the summary counts")
	return cmd
}

// validateDistribution is the check behind `nexus validate` (and the
// doctor's distribution check).
func validateDistribution(d vocabulary.Dist) (*vocabulary.Report, error) {
	// The capabilities must be enforceable with the capability map of each
	// host that has one (a host without one names its classes per call).
	var o vocabulary.Options
	for _, h := range hosts.All() {
		m := h.Profile(host.Env{}).Map
		if m == nil {
			continue
		}
		classes, err := gate.Coverage(m, nil, "")
		if err != nil {
			return nil, err
		}
		if o.Classes == nil {
			o.Host, o.Classes = h.Name(), classes
		} else {
			o.More = append(o.More, vocabulary.HostClasses{Host: h.Name(), Classes: classes})
		}
	}
	return vocabulary.ValidateWith(d, schema.NewCoreSetFS(d.FS), o), nil
}
