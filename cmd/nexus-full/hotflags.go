package main

import (
	"github.com/spf13/pflag"

	"github.com/nexus-harness/nexus/cmd/internal/hot"
)

// addFlags registers hot flags (declared once in cmd/internal/hot, which
// the front parses itself) with pflag.
func addFlags(fs *pflag.FlagSet, flags []hot.Flag) {
	for _, f := range flags {
		if f.String != nil {
			fs.StringVar(f.String, f.Name, f.Default, f.Usage)
		} else {
			fs.BoolVar(f.Bool, f.Name, false, f.Usage)
		}
		if f.Hidden {
			_ = fs.MarkHidden(f.Name)
		}
	}
}

// pflags serves a pflag set as the configuration's flags (config.Flags).
type pflags struct{ fs *pflag.FlagSet }

func (p pflags) Flag(name string) (value, typ string, changed, defined bool) {
	f := p.fs.Lookup(name)
	if f == nil {
		return "", "", false, false
	}
	return f.Value.String(), f.Value.Type(), f.Changed, true
}
