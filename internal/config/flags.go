package config

// Flags are the command line's flags a key can be bound to
// (Options.FlagKeys). The configuration does not parse a command line:
// nexus-full serves its pflag set, the front (cmd/nexus), which links no
// flag library, its own.
type Flags interface {
	// Flag reports the flag named name: its value as text (its default
	// when the command line did not set it), its type as pflag names it
	// ("string", "bool"), whether the command line set it, and whether
	// the set defines it at all.
	Flag(name string) (value, typ string, changed, defined bool)
}

// FlagValue is a flag bound to a key as the resolver reads it (the
// methods of viper's FlagValue).
type FlagValue interface {
	HasChanged() bool
	Name() string
	ValueString() string
	ValueType() string
}

type flagValue struct {
	name, value, typ string
	changed          bool
}

func (f flagValue) HasChanged() bool    { return f.changed }
func (f flagValue) Name() string        { return f.name }
func (f flagValue) ValueString() string { return f.value }
func (f flagValue) ValueType() string   { return f.typ }

// lookupFlag reads the flag named name from fs (defined is false when the
// set does not define it).
func lookupFlag(fs Flags, name string) (f flagValue, defined bool) {
	value, typ, changed, defined := fs.Flag(name)
	return flagValue{name: name, value: value, typ: typ, changed: changed}, defined
}
