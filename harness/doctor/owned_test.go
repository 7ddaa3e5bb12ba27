package doctor

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/harness/install"
)

// TestOwnedFindings: the findings every host's doctor gives on a folder of
// derived files, with the host's wording where it differs (Missing, Kind,
// Current) and one or many files in the verbs.
func TestOwnedFindings(t *testing.T) {
	repair := func(context.Context) (string, error) { return "ran", nil }
	st := func(pairs ...string) []install.OwnedStatus {
		var out []install.OwnedStatus
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, install.OwnedStatus{Path: pairs[i], State: pairs[i+1]})
		}
		return out
	}
	base := OwnedFiles{Dir: "/p/.x", Install: "nexus install x --scope user", Reinstall: repair, Kind: [2]string{"role or skill", "roles or skills"},
		Current: func(n int) string { return strings.Repeat("I", n) + " current" }}
	for _, tc := range []struct {
		name    string
		states  []install.OwnedStatus
		missing func([]string) string
		want    []Finding // Message, Status, Fixable, and a part of Fix
	}{
		{"all current", st("a", install.OwnedCurrent, "b", install.OwnedCurrent), nil,
			[]Finding{{Status: StatusOK, Message: "II current"}}},
		{"one of each", st("m", install.OwnedMissing, "o", install.OwnedOutdated, "e", install.OwnedEdited, "f", install.OwnedForeign), nil, []Finding{
			{Status: StatusError, Message: "/p/.x lacks m", Fix: "run `nexus install x --scope user` (it never", Fixable: true},
			{Status: StatusWarn, Message: "/p/.x: o was written from another nexus or distribution version and is out of date", Fixable: true},
			{Status: StatusWarn, Message: "/p/.x: e was edited after nexus wrote it; nexus leaves it alone", Fix: "`nexus install x --scope user --force`"},
			{Status: StatusWarn, Message: "/p/.x: f exists but was not written by nexus, so the nexus role or skill of that name is not installed", Fix: "rename them"},
		}},
		{"many, the host's missing", st("m1", install.OwnedMissing, "m2", install.OwnedMissing, "e1", install.OwnedEdited, "e2", install.OwnedEdited, "f1", install.OwnedForeign, "f2", install.OwnedForeign),
			func(m []string) string { return "host says " + strings.Join(m, "+") }, []Finding{
				{Status: StatusError, Message: "host says m1+m2", Fixable: true},
				{Status: StatusWarn, Message: "/p/.x: e1, e2 were edited after nexus wrote them; nexus leaves them alone"},
				{Status: StatusWarn, Message: "/p/.x: f1, f2 exist but were not written by nexus, so the nexus roles or skills of those names are not installed"},
			}},
		{"nothing", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			o.States, o.Missing = tc.states, tc.missing
			got := OwnedFindings(o)
			if len(got) != len(tc.want) {
				t.Fatalf("%d findings, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Status != w.Status || g.Message != w.Message || g.Fixable != w.Fixable || !strings.Contains(g.Fix, w.Fix) {
					t.Errorf("finding %d:\n got %+v\nwant %+v", i, g, w)
				}
			}
		})
	}
	// Without a reinstall nothing claims --fix repairs it.
	o := base
	o.Reinstall, o.States = nil, st("m", install.OwnedMissing)
	if f := OwnedFindings(o); len(f) != 1 || f[0].Fixable {
		t.Errorf("no reinstall: %+v", f)
	}
}

// TestInstallRepairAndOtherExecutable: the --fix runs the install once and
// counts what it wrote; an entry running another nexus is an error when
// that one cannot run, else a warning, each naming both.
func TestInstallRepairAndOtherExecutable(t *testing.T) {
	runs := 0
	fix := InstallRepair("user", func() ([]install.Change, error) {
		runs++
		return []install.Change{{Changed: true}, {}, {Changed: true}}, nil
	})
	if got, err := fix(context.Background()); err != nil || got != "ran the user-scope install: 2 file(s) written" {
		t.Errorf("repair: %q %v", got, err)
	}
	// Shared by several findings: later callers have nothing to report.
	if got, err := fix(context.Background()); err != nil || got != "" {
		t.Errorf("second repair: %q %v", got, err)
	}
	if runs != 1 {
		t.Errorf("the install ran %d times, want once", runs)
	}
	gone := OtherExecutable("the hooks in s.json", "run", "/no/such/nexus", "/bin/nexus", "reinstall", fix)
	if gone.Status != StatusError || !strings.HasPrefix(gone.Message, "the hooks in s.json run /no/such/nexus, which ") || !gone.Fixable {
		t.Errorf("missing executable: %+v", gone)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	other := OtherExecutable("the server", "runs", sh, "/bin/nexus", "reinstall", fix)
	if other.Status != StatusWarn || other.Message != "the server runs "+sh+", not this nexus (/bin/nexus)" {
		t.Errorf("another executable: %+v", other)
	}
}
