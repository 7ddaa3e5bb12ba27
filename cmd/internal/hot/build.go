package hot

import (
	"fmt"
	"os"
	"runtime/debug"
)

// FrontBuildEnv carries the front's build (BuildID) to nexus-full when the
// front hands it an invocation: the two programs are one nexus, installed
// together, and nexus-full refuses to run for a front of another build
// (CheckFront) rather than answer with other code than the user installed.
const FrontBuildEnv = "NEXUS_FRONT_BUILD"

// BuildID names a program's build: the version set at link time and, when
// the Go toolchain recorded them, the module's version and the commit it was
// built from (with "+dirty" for a modified work tree). nexus and nexus-full
// built together have the same one.
func BuildID(version string) string {
	id := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			id += " " + v
		}
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if rev != "" {
			id += " " + rev + dirty
		}
	}
	return id
}

// CheckFront is nexus-full's side of FrontBuildEnv: when a front handed
// this process its invocation, the front's build must be this program's
// (version, BuildID(version)). The variable is removed either way, so the
// processes this one starts do not inherit it.
func CheckFront(version string) error {
	front, ok := os.LookupEnv(FrontBuildEnv)
	if !ok {
		return nil
	}
	os.Unsetenv(FrontBuildEnv)
	if own := BuildID(version); front != own {
		exe, _ := os.Executable()
		return fmt.Errorf("nexus (build %q) found nexus-full %s of another build (%q): the two programs are one nexus and must be installed together; reinstall both (make install, or go install github.com/nexus-harness/nexus/cmd/...@latest) and remove any other nexus-full on PATH", front, exe, own)
	}
	return nil
}
