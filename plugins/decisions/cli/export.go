package cli

import (
	"encoding/json"
	"sort"

	"github.com/spf13/cobra"

	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
)

// Export is what `nexus decision export` prints: the store's folder and
// every decision's metadata with its supersession links, for a program
// that shows the whole store (nexus view) without parsing decision files
// itself. Nothing is written.
type Export struct {
	// Store is the absolute path of the project store's folder.
	Store     string           `json:"store"`
	Decisions []ExportDecision `json:"decisions"`
	// Problems are the decision files left out (unreadable or unparsable).
	Problems []ExportProblem `json:"problems"`
}

// ExportDecision is one decision, newest (highest number) first.
type ExportDecision struct {
	Number       int    `json:"number"`
	Title        string `json:"title"`
	Date         string `json:"date"`
	Status       string `json:"status"`
	Type         string `json:"type,omitempty"`
	Confidence   string `json:"confidence,omitempty"`
	Supersedes   string `json:"supersedes,omitempty"`
	SupersededBy string `json:"superseded_by,omitempty"`
	// File is store-relative: decisions/042-use-postgres.md.
	File string `json:"file"`
}

// ExportProblem is a decision file that could not be read.
type ExportProblem struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

func (r *runner) exportCmd() *cobra.Command {
	var storeDir string
	c := &cobra.Command{
		Use:   "export",
		Short: "Print the store's folder and every decision's metadata and supersession links as JSON (nothing is written)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fs, err := r.open(storeDir)
			if err != nil {
				return err
			}
			c, err := kernel.Decisions(fs)
			if err != nil {
				return &ExitError{Code: 1, Err: err}
			}
			out := Export{Store: fs.Root(), Decisions: make([]ExportDecision, 0, len(c.Entries)), Problems: []ExportProblem{}}
			for _, e := range c.Entries {
				d := e.D
				out.Decisions = append(out.Decisions, ExportDecision{
					Number: d.Num, Title: d.Title, Date: d.Date.String(), Status: d.Status, Type: d.DecisionType,
					Confidence: d.Confidence, Supersedes: d.Supersedes, SupersededBy: d.SupersededBy,
					File: "decisions/" + e.Stem + ".md",
				})
			}
			sort.SliceStable(out.Decisions, func(i, j int) bool { return out.Decisions[i].Number > out.Decisions[j].Number })
			for _, p := range c.Problems {
				out.Problems = append(out.Problems, ExportProblem{File: p.File, Reason: p.Reason})
			}
			enc := json.NewEncoder(r.opt.Stdout)
			return enc.Encode(out)
		},
	}
	c.Flags().StringVar(&storeDir, "store", "", "project store folder (default: found from .nauro/config.json above the working directory)")
	return c
}
