package hot

import (
	"fmt"
	"io"

	"github.com/nexus-harness/nexus/harness/compose"
	"github.com/nexus-harness/nexus/vocabulary"
)

// VersionLine is the first line of `nexus version` (and `nexus --version`).
func VersionLine(version string) string {
	return fmt.Sprintf("nexus %s (nexus-core %s; built in: %s)", version, vocabulary.SupportedRange, vocabulary.BuiltinVersion)
}

// DistUse describes the distribution nexus would use.
type DistUse struct {
	Version string `json:"version,omitempty"`
	Where   string `json:"where,omitempty"`  // a directory, or "built-in nexus-core X"
	Source  string `json:"source,omitempty"` // --core, NEXUS_CORE_DIR, config core.dir in FILE, node_modules, built in
	Error   string `json:"error,omitempty"`  // why it cannot be used
	Builtin bool   `json:"builtin"`
}

func (u DistUse) String() string {
	if u.Error != "" {
		return "not usable: " + u.Error
	}
	return fmt.Sprintf("nexus-core %s, %s (%s)", u.Version, u.Where, u.Source)
}

// InUse locates the distribution and reads the version from its manifest's
// first members (vocabulary.OpenManifestDist: no catalog decoding).
func InUse(r *compose.Root) DistUse {
	d, err := r.Dist()
	if err != nil {
		return DistUse{Error: err.Error()}
	}
	u := DistUse{Where: d.Where(), Source: d.Source, Builtin: d.IsBuiltin()}
	c, err := vocabulary.OpenManifestDist(d)
	if err != nil {
		u.Error = err.Error()
		return u
	}
	u.Version = c.Version()
	return u
}

// Version is `nexus version`: the nexus version (version), the nexus-core
// versions it implements, the one built in, and the distribution it would
// use here and why. When a configuration file cannot be read or parsed it
// still prints the version, says the distribution is chosen once the
// configuration loads, and returns that *config.Error (exit 3).
func Version(g Globals, version string, w io.Writer) error {
	var use DistUse
	var cfgErr error
	if o, err := ComposeOptions(g); err != nil {
		use.Error = err.Error()
	} else {
		r := compose.New(o)
		if _, err := r.Config(); unresolved(err) {
			return &ErrFull{}
		}
		use = InUse(r)
		if _, err := r.Config(); IsConfigError(err) {
			if g.Front {
				// Never reached: only a configuration without a problem
				// is kept for the front. nexus-full says it all.
				return &ErrFull{}
			}
			cfgErr = err
		}
	}
	if g.JSON {
		v := struct {
			Version   string  `json:"version"`
			NexusCore string  `json:"nexus_core"`
			Builtin   string  `json:"builtin_nexus_core"`
			InUse     DistUse `json:"distribution"`
			Config    string  `json:"configuration_error,omitempty"`
		}{Version: version, NexusCore: vocabulary.SupportedRange, Builtin: vocabulary.BuiltinVersion, InUse: use}
		if cfgErr != nil {
			v.Config = cfgErr.Error()
		}
		if err := writeJSON(w, v); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(w, VersionLine(version))
		if cfgErr == nil {
			fmt.Fprintf(w, "distribution: %s\n", use)
		} else {
			fmt.Fprintln(w, "distribution: chosen once the configuration loads")
		}
	}
	return cfgErr // exit 3, with the file that does not load
}
