package shellread

import (
	"slices"
	"strings"
)

// viewerReads returns the files one viewer invocation reads. Programs that
// are not viewers read nothing (ok). ok is false when the viewer's
// arguments cannot be read with certainty (an unknown option, a script
// file, a missing operand).
func viewerReads(name string, args []string) (files []string, ok bool) {
	switch name {
	case "cat":
		return operands(args, optSpec{noArg: "AbeEnstTuv"})
	case "head":
		return operands(args, optSpec{noArg: "qvz", withArg: "cn", digits: true,
			longArg: []string{"bytes", "lines"}})
	case "tail":
		return operands(args, optSpec{noArg: "fFqvz", withArg: "cns", digits: true,
			longArg: []string{"bytes", "lines", "pid", "sleep-interval", "max-unchanged-stats"}})
	case "less":
		f, ok := operands(args, optSpec{noArg: "aABcCdeEfFgGiIJKLmMnNqQrRsSuUVwWX"})
		if !ok || len(f) > 1 {
			return nil, false // less shows only the first of several files
		}
		return f, true
	case "sed":
		return sedReads(args)
	case "grep", "egrep", "fgrep":
		return grepReads(args)
	}
	return nil, true
}

// optSpec describes a viewer's options.
type optSpec struct {
	noArg   string   // short options without an argument
	withArg string   // short options taking an argument (attached or next word)
	digits  bool     // -NUM is an option (head -5)
	longArg []string // long options taking an argument (--lines N or --lines=N)
	// long options without an argument are accepted as they come; the
	// viewers here have no long option that changes which files are read.
}

// parsed is one command line of a viewer, split into its options and
// operands.
type parsed struct {
	short    map[byte][]string // option letter → arguments seen
	long     map[string]bool
	operands []string
}

// parse splits args per spec (options may follow operands, as GNU tools
// allow, until "--"); ok is false on an unknown short option or a missing
// option argument.
func parse(args []string, spec optSpec) (parsed, bool) {
	p := parsed{short: map[byte][]string{}, long: map[string]bool{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			p.operands = append(p.operands, args[i+1:]...)
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			p.operands = append(p.operands, a)
			continue
		}
		if name, ok := strings.CutPrefix(a, "--"); ok {
			key, _, hasValue := strings.Cut(name, "=")
			p.long[key] = true
			if !hasValue && slices.Contains(spec.longArg, key) {
				if i+1 >= len(args) {
					return p, false
				}
				i++
			}
			continue
		}
		if spec.digits && isDigits(a[1:]) {
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			switch {
			case strings.IndexByte(spec.withArg, c) >= 0:
				arg := a[j+1:]
				if arg == "" {
					if i+1 >= len(args) {
						return p, false
					}
					i++
					arg = args[i]
				}
				p.short[c] = append(p.short[c], arg)
				j = len(a)
			case strings.IndexByte(spec.noArg, c) >= 0:
				p.short[c] = append(p.short[c], "")
			default:
				return p, false
			}
		}
	}
	return p, true
}

// operands returns the file operands of a viewer that reads every operand
// ("-" is standard input and is skipped).
func operands(args []string, spec optSpec) ([]string, bool) {
	p, ok := parse(args, spec)
	if !ok {
		return nil, false
	}
	var files []string
	for _, o := range p.operands {
		if o != "-" {
			files = append(files, o)
		}
	}
	return files, true
}

// sedReads counts `sed -n SCRIPT FILE…` (print only what the script asks
// for: the idiom for reading part of a file). sed without -n, or editing
// in place, is not a read for nexus; a script file (-f) is uncertain.
func sedReads(args []string) ([]string, bool) {
	p, ok := parse(args, optSpec{noArg: "nErsuzi", withArg: "efl",
		longArg: []string{"expression", "file", "line-length"}})
	if !ok {
		// -i takes an optional attached suffix (-i.bak): a write either way.
		for _, a := range args {
			if strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--in-place") {
				return nil, true
			}
		}
		return nil, false
	}
	if _, inPlace := p.short['i']; inPlace || p.long["in-place"] {
		return nil, true
	}
	if _, f := p.short['f']; f || p.long["file"] {
		return nil, false
	}
	quiet := p.long["quiet"] || p.long["silent"]
	if _, n := p.short['n']; n {
		quiet = true
	}
	if !quiet {
		return nil, true
	}
	ops := p.operands
	if _, e := p.short['e']; !e && !p.long["expression"] {
		if len(ops) == 0 {
			return nil, false
		}
		ops = ops[1:] // the script
	}
	var files []string
	for _, o := range ops {
		if o != "-" {
			files = append(files, o)
		}
	}
	return files, true
}

// grepReads counts grep over exactly one named file whose matching lines
// are printed. Recursive searches, several files, and modes that print only
// names, counts or nothing (-l, -L, -c, -q) are scans, not reads.
func grepReads(args []string) ([]string, bool) {
	p, ok := parse(args, optSpec{
		noArg:   "abcEFGhHiIlLnoPqrRsTUvVwxyzZ",
		withArg: "efmABCdD",
		digits:  true,
		longArg: []string{"regexp", "file", "max-count", "after-context", "before-context",
			"context", "label", "directories", "devices", "include", "exclude", "exclude-dir",
			"exclude-from", "binary-files", "group-separator"},
	})
	if !ok {
		return nil, false
	}
	if _, f := p.short['f']; f || p.long["file"] {
		return nil, false // patterns from a file
	}
	for _, c := range []byte("lLcqrR") {
		if _, set := p.short[c]; set {
			return nil, true
		}
	}
	for _, l := range []string{"files-with-matches", "files-without-match", "count", "quiet",
		"silent", "recursive", "dereference-recursive", "include", "exclude", "exclude-dir", "directories"} {
		if p.long[l] {
			return nil, true
		}
	}
	if d := p.short['d']; len(d) > 0 {
		return nil, true // -d recurse/skip: a directory walk
	}
	ops := p.operands
	if _, e := p.short['e']; !e && !p.long["regexp"] {
		if len(ops) == 0 {
			return nil, false
		}
		ops = ops[1:] // the pattern
	}
	if len(ops) != 1 || ops[0] == "-" {
		return nil, true
	}
	return ops, true
}
