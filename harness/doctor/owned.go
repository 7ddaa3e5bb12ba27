package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/harness/install"
)

// OwnedFiles is what a host's doctor found of the whole files nexus
// derives into one folder (install.Owned.Check), and how the host words
// the findings on them.
type OwnedFiles struct {
	// Dir is the folder; States the files' states in it.
	Dir    string
	States []install.OwnedStatus
	// Install is the command that installs them (`nexus install codex
	// --scope user`), for the fixes.
	Install string
	// Reinstall re-runs that install (--fix) for missing and outdated
	// files; edited and foreign ones are the user's to settle.
	Reinstall func(context.Context) (string, error)
	// Missing is the fault for missing files (nil: "<dir> lacks <files>").
	Missing func(files []string) string
	// Kind names the nexus files of those names, singular and plural
	// ("role or skill", "roles or skills"), in the foreign files' warning.
	Kind [2]string
	// Current is the line when every file is present and current.
	Current func(n int) string
}

// OwnedFindings are the findings on a folder of derived files: a fault for
// missing ones, a warning each for outdated, edited and foreign ones, and
// one ok line when all are current. Every host's doctor says them alike.
func OwnedFindings(o OwnedFiles) []Finding {
	by := map[string][]string{}
	for _, s := range o.States {
		by[s.State] = append(by[s.State], s.Path)
	}
	fix := fmt.Sprintf("run `%s` (it never overwrites a file you edited)", o.Install)
	var out []Finding
	if m := by[install.OwnedMissing]; len(m) > 0 {
		msg := fmt.Sprintf("%s lacks %s", o.Dir, strings.Join(m, ", "))
		if o.Missing != nil {
			msg = o.Missing(m)
		}
		out = append(out, o.repaired(Fault(msg, fix)))
	}
	if m := by[install.OwnedOutdated]; len(m) > 0 {
		out = append(out, o.repaired(Warn(fmt.Sprintf("%s: %s %s from another nexus or distribution version and %s out of date", o.Dir, strings.Join(m, ", "), verb(m, "was written", "were written"), verb(m, "is", "are")), fix)))
	}
	if m := by[install.OwnedEdited]; len(m) > 0 {
		out = append(out, Warn(fmt.Sprintf("%s: %s %s after nexus wrote %s; nexus leaves %s alone", o.Dir, strings.Join(m, ", "), verb(m, "was edited", "were edited"), verb(m, "it", "them"), verb(m, "it", "them")),
			fmt.Sprintf("keep your edits, or restore nexus's version with `%s --force` (a backup is kept)", o.Install)))
	}
	if m := by[install.OwnedForeign]; len(m) > 0 {
		out = append(out, Warn(fmt.Sprintf("%s: %s %s but %s not written by nexus, so the nexus %s of %s %s not installed", o.Dir, strings.Join(m, ", "),
			verb(m, "exists", "exist"), verb(m, "was", "were"), verb(m, o.Kind[0], o.Kind[1]), verb(m, "that name", "those names"), verb(m, "is", "are")),
			fmt.Sprintf("rename them, or replace them with `%s --force` (a backup is kept)", o.Install)))
	}
	if len(o.States) > 0 && len(by[install.OwnedCurrent]) == len(o.States) {
		out = append(out, OK("%s", o.Current(len(o.States))))
	}
	return out
}

func (o OwnedFiles) repaired(f Finding) Finding {
	if o.Reinstall == nil {
		return f
	}
	return f.RepairedBy(o.Reinstall)
}

// verb picks the singular or the plural form for a list of files.
func verb(files []string, one, many string) string {
	if len(files) == 1 {
		return one
	}
	return many
}

// InstallRepair is the --fix of missing or outdated derived files: it runs
// the scope's install once and says how many files it wrote.
func InstallRepair(scope string, run func() ([]install.Change, error)) func(context.Context) (string, error) {
	return Once(func(context.Context) (string, error) {
		changes, err := run()
		n := 0
		for _, ch := range changes {
			if ch.Changed {
				n++
			}
		}
		return fmt.Sprintf("ran the %s-scope install: %d file(s) written", scope, n), err
	})
}

// OtherExecutable is the finding on entries of a host that run another
// nexus (what, run, exe: "the hooks in X", "run", its path): an error when
// it cannot run, a warning when it is merely another build or copy.
func OtherExecutable(what, run, exe, this, fix string, repair func(context.Context) (string, error)) Finding {
	if err := Runnable(exe); err != nil {
		return Fault(fmt.Sprintf("%s %s %s, which %v", what, run, exe, err), fix).RepairedBy(repair)
	}
	return Warn(fmt.Sprintf("%s %s %s, not this nexus (%s)", what, run, exe, this), fix).RepairedBy(repair)
}
