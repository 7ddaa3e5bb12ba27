package main

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/nexus-harness/nexus/cmd/internal/hot"
)

// parsed is what a parse of a hook's arguments gives the command.
type parsed struct {
	Project, Core string
	JSON          bool
	Hook          hot.HookArgs
	Changed       []string
	Args          []string
}

// parseFront parses args with the front's flag set; ok is false when it
// leaves them to nexus-full.
func parseFront(args []string) (p parsed, ok bool) {
	fs := &flagSet{}
	fs.add(hot.GlobalFlags(&p.Project, &p.Core, &p.JSON))
	fs.add(hot.HookFlags(&p.Hook))
	if fs.parse(args) != nil {
		return p, false
	}
	for _, f := range fs.flags {
		if _, _, changed, _ := fs.Flag(f.Name); changed {
			p.Changed = append(p.Changed, f.Name)
		}
	}
	p.Args = fs.args
	return p, true
}

// parsePFlag parses args with pflag and the same declarations, as
// nexus-full does.
func parsePFlag(args []string) (p parsed, err error) {
	fs := pflag.NewFlagSet("nexus hook", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, f := range append(hot.GlobalFlags(&p.Project, &p.Core, &p.JSON), hot.HookFlags(&p.Hook)...) {
		if f.String != nil {
			fs.StringVar(f.String, f.Name, f.Default, f.Usage)
		} else {
			fs.BoolVar(f.Bool, f.Name, false, f.Usage)
		}
	}
	if err := fs.Parse(args); err != nil {
		return p, err
	}
	for _, f := range append(hot.GlobalFlags(new(string), new(string), new(bool)), hot.HookFlags(&hot.HookArgs{})...) {
		if fs.Changed(f.Name) {
			p.Changed = append(p.Changed, f.Name)
		}
	}
	p.Args = fs.Args()
	return p, nil
}

// checkSame wants the front to give what pflag gives for every argument
// list it takes.
func checkSame(t *testing.T, args []string) (taken bool) {
	t.Helper()
	front, ok := parseFront(args)
	if !ok {
		return false
	}
	want, err := parsePFlag(args)
	if err != nil {
		t.Fatalf("%q: the front took what pflag refuses (%v)", args, err)
	}
	if len(front.Args) == 0 {
		front.Args = nil
	}
	if len(want.Args) == 0 {
		want.Args = nil
	}
	if !reflect.DeepEqual(front, want) {
		t.Fatalf("%q:\nfront %+v\npflag %+v", args, front, want)
	}
	return true
}

func TestFrontFlagsAsPFlag(t *testing.T) {
	for _, c := range []struct {
		args  string
		taken bool
	}{
		{"", true},
		{"--host claude", true},
		{"--host=codex PreToolUse", true},
		{"PreToolUse --host codex", true},
		{"--host claude --managed", true},
		{"--plugin --host claude", true},
		{"--variant plugin", true},
		{"--project /p --core /c --json", true},
		{"--json=false --serve=true", true},
		{"--json=1 --serve=F", true},
		{"--host --json", true}, // pflag takes the next argument as the value
		{"--core=", true},
		{"- x", true},
		{"--host claude --host codex", true},
		{"--help", false},
		{"-h", false},
		{"--host", false},
		{"--json=maybe", false},
		{"--nope", false},
		{"-- PreToolUse", false},
		{"-x", false},
		{"--serve x=y", true},
	} {
		t.Run(c.args, func(t *testing.T) {
			if got := checkSame(t, strings.Fields(c.args)); got != c.taken {
				t.Errorf("taken %v, want %v", got, c.taken)
			}
		})
	}
}

// FuzzFrontFlags: whatever the front takes, it parses as pflag does.
func FuzzFrontFlags(f *testing.F) {
	for _, s := range []string{"--host claude", "--host=codex PreToolUse", "--json=1 --serve", "--core= x", "- --plugin"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkSame(t, strings.Split(s, " "))
	})
}
