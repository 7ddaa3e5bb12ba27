// Package shellread finds the files a shell command line reads with the
// plain file viewers agents use (cat, head, tail, less, sed -n, grep of one
// named file), for memory-read observation.
//
// It is conservative in the direction that matters for a usage counter:
// it never reports a read it is not sure of. Any construct whose effect
// depends on the shell at run time — parameter and command substitution,
// globs, brace and tilde expansion, subshells, here-documents, input
// redirection, unknown options of a viewer, a working directory nexus cannot
// follow — makes the whole command line report nothing. Programs other than
// the viewers (scripts, interpreters, sudo, xargs) are not looked into:
// they read nothing as far as nexus knows.
package shellread

import (
	"path/filepath"
	"strings"
)

// Reads returns the files cmd reads, as cleaned absolute paths (relative
// names are resolved against cwd and any `cd` the line makes), each once, in
// order. ok is false when the line cannot be analysed with certainty; files
// is then nil. cwd must be absolute for relative names to resolve; with an
// empty cwd a relative name makes the line uncertain.
func Reads(cmd, cwd string) (files []string, ok bool) {
	segs, ok := lex(cmd)
	if !ok {
		return nil, false
	}
	an := analysis{cwd: cwd, known: true, seen: map[string]bool{}}
	for i, s := range segs {
		before := sepStart
		if i > 0 {
			before = segs[i-1].sep
		}
		if !an.segment(s, before) {
			return nil, false
		}
	}
	return an.files, true
}

// separators between simple commands
type sep int

const (
	sepStart sep = iota // before the first command
	sepEnd              // after the last command
	sepSeq              // ; or newline
	sepAnd              // &&
	sepOr               // ||
	sepPipe             // | or |&
)

type word struct {
	text   string
	assign bool // an unquoted NAME=... prefix: a variable assignment
}

type segment struct {
	words []word
	sep   sep // what follows this command
}

// lex splits a command line into simple commands of unquoted words. It
// reports ok=false on anything it does not fully understand.
func lex(s string) ([]segment, bool) {
	var (
		segs    []segment
		cur     segment
		buf     strings.Builder
		inWord  bool
		quoted  bool // the current word had a quoted part
		nameEnd = -1 // index in buf where an unquoted NAME= prefix ends
		skipNxt bool // the next word is a redirection target (written, not read)
	)
	flush := func() bool {
		if !inWord {
			return true
		}
		w := word{text: buf.String(), assign: nameEnd > 0}
		buf.Reset()
		inWord, quoted, nameEnd = false, false, -1
		if skipNxt {
			skipNxt = false
			return true
		}
		cur.words = append(cur.words, w)
		return true
	}
	endSeg := func(sp sep) bool {
		flush()
		if skipNxt {
			return false // redirection without a target
		}
		if len(cur.words) == 0 {
			// `a && && b`, a leading `|`, `;;` (case): not a plain list.
			if sp == sepSeq && len(segs) > 0 && segs[len(segs)-1].sep == sepSeq {
				return true // blank lines and `;` after newline are harmless
			}
			if len(segs) == 0 && sp == sepSeq {
				return true // leading newline or `;`... harmless
			}
			return false
		}
		cur.sep = sp
		segs = append(segs, cur)
		cur = segment{}
		return true
	}
	// startWord notes that the current word gets content.
	startWord := func() { inWord = true }
	isNameChar := func(c byte, first bool) bool {
		return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t':
			flush()
		case '\n':
			if !endSeg(sepSeq) {
				return nil, false
			}
		case ';':
			if i+1 < len(s) && (s[i+1] == ';' || s[i+1] == '&') {
				return nil, false // case terminators
			}
			if !endSeg(sepSeq) {
				return nil, false
			}
		case '&':
			switch {
			case i+1 < len(s) && s[i+1] == '&':
				if !endSeg(sepAnd) {
					return nil, false
				}
				i++
			case i+1 < len(s) && s[i+1] == '>':
				// &> and &>>: stdout and stderr to a file.
				flush()
				i++
				if i+1 < len(s) && s[i+1] == '>' {
					i++
				}
				skipNxt = true
			default:
				return nil, false // background job
			}
		case '|':
			if i+1 < len(s) && s[i+1] == '|' {
				if !endSeg(sepOr) {
					return nil, false
				}
				i++
				continue
			}
			if i+1 < len(s) && s[i+1] == '&' {
				i++
			}
			if !endSeg(sepPipe) {
				return nil, false
			}
		case '>':
			// An all-digit word right before is the fd number (2>...).
			if inWord && !quoted && isDigits(buf.String()) {
				buf.Reset()
				inWord, nameEnd = false, -1
			} else {
				flush()
			}
			if skipNxt {
				return nil, false
			}
			if i+1 < len(s) && (s[i+1] == '>' || s[i+1] == '|') {
				i++
			} else if i+1 < len(s) && s[i+1] == '&' {
				i++ // >&2, 2>&1: the target is an fd
			}
			skipNxt = true
		case '<':
			return nil, false // input redirection, here-docs, process substitution
		case '(', ')', '{', '}', '`', '$', '*', '?', '[', ']', '!':
			return nil, false // subshells, groups, expansions, globs, history
		case '~':
			if !inWord {
				return nil, false // tilde expansion
			}
			buf.WriteByte(c)
		case '#':
			if inWord {
				buf.WriteByte(c)
				continue
			}
			// A comment runs to the end of the line.
			for i+1 < len(s) && s[i+1] != '\n' {
				i++
			}
		case '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			if s[i] == '\n' {
				continue // line continuation
			}
			startWord()
			quoted = true
			buf.WriteByte(s[i])
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			startWord()
			quoted = true
			buf.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case '"':
			startWord()
			quoted = true
			i++
			for ; ; i++ {
				if i >= len(s) {
					return nil, false
				}
				d := s[i]
				if d == '"' {
					break
				}
				if d == '$' || d == '`' {
					return nil, false
				}
				if d == '\\' && i+1 < len(s) {
					switch s[i+1] {
					case '"', '\\':
						i++
						d = s[i]
					case '\n':
						i++
						continue
					case '$', '`':
						i++
						d = s[i]
					}
				}
				buf.WriteByte(d)
			}
		case '=':
			if inWord && !quoted && nameEnd < 0 && buf.Len() > 0 {
				name := buf.String()
				okName := isNameChar(name[0], true)
				for k := 1; k < len(name) && okName; k++ {
					okName = isNameChar(name[k], false)
				}
				if okName {
					nameEnd = buf.Len()
				}
			}
			startWord()
			buf.WriteByte(c)
		default:
			startWord()
			buf.WriteByte(c)
		}
	}
	flush()
	if skipNxt {
		return nil, false
	}
	if len(cur.words) > 0 {
		cur.sep = sepEnd
		segs = append(segs, cur)
	} else if len(segs) > 0 && segs[len(segs)-1].sep != sepSeq {
		return nil, false // ends in `&&`, `||` or `|`
	}
	if len(segs) > 0 && segs[len(segs)-1].sep == sepSeq {
		segs[len(segs)-1].sep = sepEnd
	}
	return segs, true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

type analysis struct {
	cwd   string
	known bool // cwd is certain for the next command
	chain bool // cwd was set by a cd whose && chain is still running
	files []string
	seen  map[string]bool
}

// shellKeywords start compound commands nexus does not follow.
var shellKeywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true,
	"for": true, "while": true, "until": true, "do": true, "done": true,
	"case": true, "esac": true, "select": true, "function": true,
	"coproc": true, "[[": true, "]]": true, "time": true,
}

func (an *analysis) segment(s segment, before sep) bool {
	words := s.words
	for len(words) > 0 && words[0].assign {
		words = words[1:]
	}
	if len(words) > 0 {
		name := words[0].text
		if shellKeywords[name] {
			return false
		}
		args := make([]string, len(words)-1)
		for i, w := range words[1:] {
			args[i] = w.text
		}
		switch name {
		case "cd":
			an.cd(args, before, s.sep)
			return true // cd decides about the chain itself
		case "pushd", "popd":
			an.known = false
		default:
			files, ok := viewerReads(commandName(name), args)
			if !ok {
				return false
			}
			for _, f := range files {
				if !an.add(f) {
					return false
				}
			}
		}
	}
	an.after(s.sep)
	return true
}

// after ends a cd's reach: the directory it set holds along its && chain
// (pipelines included) and is uncertain after ;, || or a newline, where
// the next command runs whether or not the cd succeeded.
func (an *analysis) after(next sep) {
	if an.chain && next != sepAnd && next != sepPipe {
		an.chain, an.known = false, false
	}
}

// cd follows `cd DIR && …`, the one form whose effect is certain for the
// commands chained after it. Any other cd leaves the directory unknown.
func (an *analysis) cd(args []string, before, next sep) {
	if len(args) == 2 && args[0] == "--" {
		args = args[1:]
	}
	certain := len(args) == 1 && args[0] != "" && !strings.HasPrefix(args[0], "-") &&
		next == sepAnd && before != sepOr && before != sepPipe && an.known
	if !certain {
		an.known, an.chain = false, false
		return
	}
	dir := args[0]
	if !filepath.IsAbs(dir) {
		if an.cwd == "" {
			an.known, an.chain = false, false
			return
		}
		dir = filepath.Join(an.cwd, dir)
	}
	an.cwd, an.chain = filepath.Clean(dir), true
}

func (an *analysis) add(f string) bool {
	if !filepath.IsAbs(f) {
		if !an.known || an.cwd == "" {
			return false
		}
		f = filepath.Join(an.cwd, f)
	}
	f = filepath.Clean(f)
	if !an.seen[f] {
		an.seen[f] = true
		an.files = append(an.files, f)
	}
	return true
}

// commandName maps /bin/cat and /usr/bin/cat to cat; other paths stay
// themselves (and so are not viewers).
func commandName(name string) string {
	for _, dir := range []string{"/bin/", "/usr/bin/", "/usr/local/bin/"} {
		if rest, ok := strings.CutPrefix(name, dir); ok && !strings.Contains(rest, "/") {
			return rest
		}
	}
	return name
}
