package main

import (
	"errors"
	"strconv"
	"strings"

	"github.com/nexus-harness/nexus/cmd/internal/hot"
)

// errNotTaken is an argument the front does not take as it stands:
// nexus-full, whose pflag parses the same flags (hot.Flag), answers it.
var errNotTaken = errors.New("not the front's to parse")

// flagSet parses the hot commands' flags as pflag does, in the forms the
// hosts' hooks and `nexus install` write and a person types: --name value,
// --name=value, --bool, --bool=true|false (strconv.ParseBool, as pflag),
// arguments anywhere. Anything else (a short option, --, --help, a flag it
// does not know, a value missing or not a bool) is errNotTaken. The front
// links no flag library: pflag links net, which every hook process would
// initialise (docs/performance.md, "The hook's own start").
type flagSet struct {
	flags   []hot.Flag
	changed map[string]bool
	args    []string
}

func (fs *flagSet) add(flags []hot.Flag) {
	for _, f := range flags {
		if f.String != nil {
			*f.String = f.Default
		} else {
			*f.Bool = false
		}
		fs.flags = append(fs.flags, f)
	}
}

func (fs *flagSet) lookup(name string) *hot.Flag {
	for i := range fs.flags {
		if fs.flags[i].Name == name {
			return &fs.flags[i]
		}
	}
	return nil
}

func (fs *flagSet) parse(args []string) error {
	fs.changed = map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			fs.args = append(fs.args, a)
			continue
		}
		if !strings.HasPrefix(a, "--") || a == "--" {
			return errNotTaken
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		f := fs.lookup(name)
		switch {
		case f == nil:
			return errNotTaken
		case f.Bool != nil:
			v := true
			if hasValue {
				b, err := strconv.ParseBool(value)
				if err != nil {
					return errNotTaken
				}
				v = b
			}
			*f.Bool = v
		case hasValue:
			*f.String = value
		case i+1 < len(args):
			i++
			*f.String = args[i]
		default:
			return errNotTaken
		}
		fs.changed[name] = true
	}
	return nil
}

// Flag serves the parsed flags to the configuration (config.Flags).
func (fs *flagSet) Flag(name string) (value, typ string, changed, defined bool) {
	f := fs.lookup(name)
	switch {
	case f == nil:
		return "", "", false, false
	case f.String != nil:
		return *f.String, "string", fs.changed[name], true
	default:
		return strconv.FormatBool(*f.Bool), "bool", fs.changed[name], true
	}
}
