package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/plugins/decisions/decision"
	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
)

// The files `nauro init` writes. Only project.md takes the project name
// (inserted literally: the reference uses str.format, so braces in the
// name stay as they are).
const (
	projectTemplate = "# {project_name}\n" +
		"**One-liner:** [What this does in one sentence, e.g. \"A CLI tool that syncs project context to AI coding agents.\"]\n" +
		"## Goals\n" +
		"- [Primary goal \u2014 what success looks like in concrete terms, e.g. \"Reduce agent ramp-up from 5 min to under 30 seconds\"]\n" +
		"- [Secondary goal]\n" +
		"## Non-goals\n" +
		"- [Something explicitly out of scope, e.g. \"Not a project management tool \u2014 no task tracking\"]\n" +
		"## Users\n" +
		"[Who uses this and how \u2014 be specific. \"Mobile-first consumers aged 18-35 discovering recipes\" is useful. \"Users\" is not.]\n" +
		"## Constraints\n" +
		"- [Hard limits: budget, timeline, regulatory, platform, e.g. \"Must ship MVP by June 2026\"]\n" +
		"- [Technical constraints, e.g. \"Must run offline \u2014 no cloud dependency in v1\"]\n"
	stateTemplate = "# Current State\n\n_(No state recorded yet.)_\n"
	stackTemplate = "# Stack\n" +
		"## Language & Framework\n" +
		"**Python + Typer** *(example \u2014 replace with your choice)* \u2014 Chosen for: fast CLI prototyping, strong ecosystem for LLM tooling. Rejected: Go (faster binary, but slower iteration for a solo developer), Node/oclif (weaker subprocess and file handling).\n" +
		"[Replace the example above and add your core choices using the same format: **Choice** \u2014 Chosen for: reasons. Rejected: alternatives (why not).]\n" +
		"## Infrastructure\n" +
		"[e.g. \"**SQLite** \u2014 Chosen for: zero-config, single-file, good enough for local-first v1. Rejected: Postgres (operational overhead for a CLI tool).\"]\n" +
		"## Key Libraries\n" +
		"[e.g. \"**FastAPI** for MCP server \u2014 async, auto-generated OpenAPI docs, familiar.\"]\n"
	questionsTemplate = "# Open Questions\n" +
		"- [First unresolved question, e.g. \"Should we support team sync in v1 or defer to v2?\"]\n" +
		"- ~~[Example resolved question]~~ \u2192 Resolved: [How it was resolved]\n"
)

// SeedStem is the file stem of the scaffold's first decision.
const SeedStem = "001-initial-setup"

// SeedDecision is the decision `nauro init` records, dated today (UTC).
func SeedDecision(now time.Time) *decision.Decision {
	d := decision.New()
	d.Date = decision.Date{Year: now.UTC().Year(), Month: int(now.UTC().Month()), Day: now.UTC().Day()}
	d.Confidence = "high"
	d.Num = 1
	d.Title = decision.SeedTitle
	d.Rationale = "Initial project setup \u2014 scaffold the Nauro project store and begin tracking architectural decisions.\n\n" +
		"Explicit decision tracking from day one prevents context loss when onboarding contributors or switching between projects."
	r1 := "Hard to find, no structure \u2014 does not scale past a few entries."
	r2 := "Context is already lost by the time you decide you need it."
	d.Rejected = []decision.Rejected{{Name: "Ad-hoc notes in README", Reason: &r1}, {Name: "No tracking until later", Reason: &r2}}
	return d
}

// ScaffoldFiles returns the files of a new store, store-relative.
func ScaffoldFiles(projectName string, now time.Time, mode decision.Frontmatter) map[string]string {
	return map[string]string{
		kernel.ProjectFile:                           strings.Replace(projectTemplate, "{project_name}", projectName, 1),
		kernel.StateCurrentFile:                      stateTemplate,
		kernel.StackFile:                             stackTemplate,
		kernel.OpenQuestionsFile:                     questionsTemplate,
		kernel.DecisionsDir + "/" + SeedStem + ".md": decision.Format(SeedDecision(now), mode),
	}
}

// Scaffold creates a project store at dir (mkdir -p semantics) with the
// reference's five files; existing files are left alone.
func Scaffold(dir, projectName string, now time.Time, mode decision.Frontmatter) error {
	for _, sub := range []string{"", kernel.DecisionsDir, kernel.SnapshotsDir} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("create store directory: %w", err)
		}
	}
	fs, err := Open(dir)
	if err != nil {
		return err
	}
	defer fs.Close()
	// Like nauro init, the scaffold is written without sidecar locks: the
	// store is new and nobody else writes it yet.
	for rel, text := range ScaffoldFiles(projectName, now, mode) {
		if _, ok, _ := fs.ReadFile(rel); ok {
			continue
		}
		if err := fs.writeUnlocked(rel, text); err != nil {
			return err
		}
	}
	return nil
}
