package main

import (
	"testing"
)

// A hot command is built alone when named first (a hook pays for no other
// command), and every command is registered otherwise.
func TestHotCommandsBuildAlone(t *testing.T) {
	for _, c := range commands {
		root := newRootCmdFor([]string{c.name})
		names := map[string]bool{}
		for _, sub := range root.Commands() {
			names[sub.Name()] = true
		}
		switch {
		case c.hot && (len(names) != 1 || !names[c.name]):
			t.Errorf("%s is hot but the root holds %v", c.name, names)
		case !c.hot && len(names) != len(commands):
			t.Errorf("%s: the root holds %d commands, want all %d", c.name, len(names), len(commands))
		}
	}
	for _, hot := range []string{"hook", "statusline", "version"} {
		if !isHot(hot) {
			t.Errorf("%s must be hot: it runs on every tool call or message", hot)
		}
	}
}
