package main

import (
	"strings"
)

// assess reports whether command is refused and why. It looks at each
// simple command (split on ;, &&, || and |) for an rm that is both recursive
// and forced and aims at the root, the home folder or everything in them.
// It is an example, not a sandbox: a determined command gets past it.
func assess(command string) (reason string, refused bool) {
	for _, part := range splitCommands(command) {
		words := strings.Fields(part)
		for len(words) > 0 && (words[0] == "sudo" || words[0] == "command" || words[0] == "exec" || strings.Contains(words[0], "=")) {
			words = words[1:]
		}
		if len(words) == 0 || (words[0] != "rm" && !strings.HasSuffix(words[0], "/rm")) {
			continue
		}
		recursive, force := false, false
		var targets []string
		for _, w := range words[1:] {
			switch {
			case w == "--recursive":
				recursive = true
			case w == "--force":
				force = true
			case strings.HasPrefix(w, "--"):
			case strings.HasPrefix(w, "-") && len(w) > 1:
				recursive = recursive || strings.ContainsAny(w, "rR")
				force = force || strings.Contains(w, "f")
			default:
				targets = append(targets, strings.Trim(w, `"'`))
			}
		}
		if !recursive || !force {
			continue
		}
		for _, t := range targets {
			if isPrecious(t) {
				return "refusing `" + strings.TrimSpace(part) + "`: it force-deletes " + t + " recursively", true
			}
		}
	}
	return "", false
}

func isPrecious(target string) bool {
	t := strings.TrimRight(target, "/")
	t = strings.TrimSuffix(t, "/*")
	t = strings.TrimRight(t, "/")
	switch t {
	case "", "*", "~", "$HOME", "${HOME}", "/*":
		return true
	}
	return false
}

func splitCommands(s string) []string {
	for _, sep := range []string{"&&", "||", ";", "|", "\n"} {
		s = strings.ReplaceAll(s, sep, "\x00")
	}
	return strings.Split(s, "\x00")
}
