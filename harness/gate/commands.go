package gate

// What nexus knows about commands: which programs, with which options,
// write which files. shell.go turns a command line into the words and
// redirections these functions look at.

import (
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

var harmlessTargets = map[string]bool{
	"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true,
}

func harmless(w word) bool {
	return w.literal && (harmlessTargets[w.text] || strings.HasPrefix(w.text, "/dev/fd/"))
}

// interpreterWrites flags inline code that may write files. False
// positives only make the gate stricter.
var interpreterWrites = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\bopen\s*\(|\.write|writefile|appendfile|\bunlink|\bremove|rmtree|rmdir|\brename|mkdir|makedirs|truncate|shutil|copyfile|\bsystem\s*\(|subprocess|child_process|\bexec[a-z]*\s*\(|\bspawn|\bfs\.|\bfile_put_contents|\bfopen|\bprintf?\b[^;{}\n]*>`)
})

var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "ash": true}
var interpreters = map[string]bool{"python": true, "python2": true, "python3": true, "node": true, "nodejs": true, "deno": true, "php": true, "lua": true, "Rscript": true}

var awkRedirect = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bprintf?\b[^;{}\n]*>`) })

// redirect records what one redirection writes.
func (a *shellAnalysis) redirect(r redirect) {
	if harmless(r.target) {
		return
	}
	t := r.target
	switch r.op {
	case ">", ">|", "&>":
		a.write("output redirection to "+describe(t), &t, "file_creation", "file_modification")
	case ">>", "&>>", "<>":
		a.write("appending redirection to "+describe(t), &t, "file_modification")
	case ">&":
		if !isFD(t) {
			a.write("output redirection to "+describe(t), &t, "file_creation", "file_modification")
		}
	}
}

func isFD(w word) bool {
	if !w.literal {
		return false
	}
	if w.text == "-" {
		return true
	}
	for _, r := range w.text {
		if r < '0' || r > '9' {
			return false
		}
	}
	return w.text != ""
}

func describe(w word) string {
	if !w.literal {
		return "an expanded path"
	}
	return w.text
}

func (a *shellAnalysis) exec(words []word, redirs []redirect, depth int) {
	if len(words) == 0 {
		return
	}
	if words[0].procsub {
		return
	}
	if !words[0].literal {
		a.writeUnknown("runs a command named by an expansion; treated as writing", "file_modification")
		return
	}
	name := path.Base(words[0].text)
	args := words[1:]
	switch name {
	case "sudo", "doas":
		a.exec(skipOptions(args, "uUgChpr"), redirs, depth)
	case "env":
		rest := skipOptions(args, "uSC")
		for len(rest) > 0 && rest[0].literal && strings.Contains(rest[0].text, "=") {
			rest = rest[1:]
		}
		a.exec(rest, redirs, depth)
	case "nohup", "time", "command", "builtin", "exec", "nice", "ionice", "stdbuf", "chronic", "unbuffer", "setsid", "caffeinate":
		a.exec(skipOptions(args, "nctioeu"), redirs, depth)
	case "timeout":
		rest := skipOptions(args, "sk")
		if len(rest) > 0 {
			rest = rest[1:] // the duration
		}
		a.exec(rest, redirs, depth)
	case "xargs":
		rest := skipOptions(args, "nILPdEsaeil")
		sub := &shellAnalysis{}
		// Its operands come from stdin.
		sub.exec(append(append([]word(nil), rest...), word{text: "<xargs input>"}), nil, depth)
		if sub.writes {
			a.writeUnknown("xargs runs "+firstWord(rest)+" on its input", slices.Sorted(maps.Keys(sub.classes))...)
		}
	case "eval":
		var parts []string
		for _, w := range args {
			if !w.literal {
				a.writeUnknown("eval of an expanded string; treated as writing", "file_modification")
				return
			}
			parts = append(parts, w.text)
		}
		a.script(strings.Join(parts, " "), depth+1)
	case "rm", "rmdir", "unlink", "shred", "srm":
		a.each(name, operands(args, ""), "file_deletion")
	case "touch":
		a.each(name, operands(args, "rdtA"), "file_creation")
	case "mkdir":
		a.each(name, operands(args, "m"), "file_creation")
	case "mkfifo", "mknod":
		a.each(name, operands(args, "m"), "file_creation")
	case "cp", "install", "ln", "link", "rsync", "scp":
		a.copyLike(name, args)
	case "mv", "rename":
		a.each(name, operands(args, "tS"), "file_creation", "file_deletion")
	case "tee", "sponge":
		a.each(name, operands(args, ""), "file_creation", "file_modification")
	case "truncate":
		a.each(name, operands(args, "sr"), "file_modification")
	case "dd":
		for _, w := range args {
			if strings.HasPrefix(w.text, "of=") {
				t := word{text: strings.TrimPrefix(w.text, "of="), literal: w.literal}
				if !harmless(t) {
					a.write("dd of="+describe(t), &t, "file_creation", "file_modification")
				}
			}
		}
	case "sed", "gsed":
		a.sed(args)
	case "perl", "ruby":
		if hasShortFlag(args, 'i') {
			a.writeUnknown(name+" -i edits files in place", "file_modification", "partial_file_edit")
			return
		}
		a.interpreter(name, args, redirs, "e", depth)
	case "awk", "gawk", "mawk", "nawk":
		if hasArg(args, "inplace") {
			a.writeUnknown(name+" -i inplace edits files in place", "file_modification", "partial_file_edit")
			return
		}
		for _, w := range args {
			if !strings.HasPrefix(w.text, "-") && awkRedirect().MatchString(w.text) {
				a.writeUnknown(name+" program redirects output to a file", "file_creation", "file_modification")
				return
			}
		}
	case "ed", "ex", "vi", "vim", "nvim", "nano", "emacs", "pico":
		ops := operands(args, "cSsu")
		if len(ops) == 0 {
			a.writeUnknown(name+" edits files", "file_modification")
		}
		a.each(name, ops, "file_modification")
	case "patch":
		a.writeUnknown("patch applies changes to files", "file_modification", "partial_file_edit")
	case "split", "csplit":
		a.writeUnknown(name+" creates files", "file_creation")
	case "git":
		a.git(args)
	case "curl":
		a.curl(args)
	case "wget":
		a.wget(args)
	case "tar", "bsdtar":
		a.tar(args)
	case "unzip", "7z", "7za", "unrar":
		if !hasAnyFlag(args, "-l", "-t", "-v", "-Z", "-p", "l", "t") {
			a.writeUnknown(name+" extracts files", "file_creation")
		}
	case "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "compress", "uncompress":
		ops := operands(args, "SbTL")
		if len(ops) > 0 && !hasAnyFlag(args, "-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test") {
			// Each operand is replaced by a file with a derived name.
			a.each(name, ops, "file_creation", "file_deletion")
			a.writeUnknown(name+" writes compressed or decompressed files", "file_creation", "file_deletion")
		}
	case "find":
		a.find(args, depth)
	case "gofmt", "goimports", "shfmt":
		if hasAnyFlag(args, "-w") {
			a.formatter(name, args)
		}
	case "clang-format":
		if hasAnyFlag(args, "-i") {
			a.formatter(name, args)
		}
	case "prettier":
		if hasAnyFlag(args, "--write", "-w") {
			a.formatter(name, args)
		}
	case "eslint", "stylelint":
		if hasAnyFlag(args, "--fix") {
			a.formatter(name, args)
		}
	case "black", "isort", "rustfmt":
		if !hasAnyFlag(args, "--check", "--diff", "--check-only", "--print") {
			a.formatter(name, args)
		}
	case "yapf", "autopep8":
		if hasAnyFlag(args, "-i", "--in-place") {
			a.formatter(name, args)
		}
	case "ruff":
		if len(args) > 0 && ((args[0].text == "format" && !hasAnyFlag(args, "--check", "--diff")) || (args[0].text == "check" && hasAnyFlag(args, "--fix"))) {
			a.formatter(name, args[1:])
		}
	case "go":
		a.goTool(args)
	case "cargo":
		if len(args) > 0 {
			switch args[0].text {
			case "fmt":
				if !hasAnyFlag(args, "--check") {
					a.writeUnknown("cargo fmt rewrites sources", "file_modification")
				}
			case "add", "remove", "rm", "init", "new", "fix", "update", "generate-lockfile":
				a.writeUnknown("cargo "+args[0].text+" changes project files", "file_modification")
			}
		}
	case "npm", "pnpm", "yarn", "bun":
		if len(args) > 0 {
			switch args[0].text {
			case "install", "i", "ci", "add", "remove", "rm", "uninstall", "un", "update", "up", "upgrade", "init", "create", "link", "dedupe", "prune", "version":
				a.writeUnknown(name+" "+args[0].text+" changes project files", "file_modification")
			}
		}
		if name == "bun" {
			a.interpreter(name, args, redirs, "e", depth)
		}
	}
	if shells[name] {
		a.shell(name, args, redirs, depth)
	}
	if interpreters[name] {
		a.interpreter(name, args, redirs, "ce", depth)
	}
}

func (a *shellAnalysis) each(name string, ops []word, classes ...string) {
	for _, w := range ops {
		w := w
		if harmless(w) || w.procsub {
			continue
		}
		a.write(name+" "+describe(w), &w, classes...)
	}
}

func (a *shellAnalysis) copyLike(name string, args []word) {
	if t, ok := optionValue(args, "t", "--target-directory"); ok {
		a.write(name+" into "+describe(t), &t, "file_creation")
		return
	}
	ops := operands(args, "StmogTBe")
	if name == "scp" || name == "rsync" {
		if len(ops) >= 2 {
			last := ops[len(ops)-1]
			if last.literal && strings.Contains(last.text, ":") {
				return // remote destination
			}
		}
	}
	if len(ops) < 2 {
		if name == "install" && hasAnyFlag(args, "-d") && len(ops) == 1 {
			a.each(name, ops, "file_creation")
			return
		}
		if len(ops) == 1 && (name == "ln" || name == "link") {
			// ln -s target: creates a link named after target in the cwd.
			a.writeUnknown(name+" creates a link", "file_creation")
			return
		}
		if len(ops) == 0 {
			return
		}
		a.writeUnknown(name+" with one operand", "file_creation")
		return
	}
	last := ops[len(ops)-1]
	a.write(name+" to "+describe(last), &last, "file_creation", "file_modification")
}

func (a *shellAnalysis) sed(args []word) {
	inPlace := false
	script := false
	var ops []word
	for i := 0; i < len(args); i++ {
		w := args[i].text
		switch {
		case w == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(w, "--in-place"):
			inPlace = true
		case w == "--expression" || w == "--file":
			script = true
			i++
		case strings.HasPrefix(w, "--expression=") || strings.HasPrefix(w, "--file="):
			script = true
		case strings.HasPrefix(w, "--"):
		case strings.HasPrefix(w, "-") && len(w) > 1:
			for k := 1; k < len(w); k++ {
				ch := w[k]
				if ch == 'i' {
					inPlace = true
					break // the rest is a backup suffix
				}
				if ch == 'e' || ch == 'f' || ch == 'l' {
					if ch != 'l' {
						script = true
					}
					if k == len(w)-1 {
						i++
					}
					break
				}
			}
		default:
			ops = append(ops, args[i])
		}
	}
	if !inPlace {
		return
	}
	if !script && len(ops) > 0 {
		ops = ops[1:]
	}
	if len(ops) == 0 {
		a.writeUnknown("sed -i edits files in place", "file_modification", "partial_file_edit")
		return
	}
	a.each("sed -i", ops, "file_modification", "partial_file_edit")
}

func (a *shellAnalysis) shell(name string, args []word, redirs []redirect, depth int) {
	for i := 0; i < len(args); i++ {
		w := args[i].text
		if w == "-c" || (strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.ContainsRune(w[1:], 'c')) {
			if i+1 >= len(args) {
				return
			}
			if !args[i+1].literal {
				a.writeUnknown(name+" -c with an expanded script; treated as writing", "file_modification")
				return
			}
			a.script(args[i+1].text, depth+1)
			return
		}
		if !strings.HasPrefix(w, "-") {
			return // a script file: executed, not inspected
		}
	}
	// No -c and no script file: the shell reads its script from stdin.
	for _, r := range redirs {
		if r.heredoc != nil {
			a.script(*r.heredoc, depth+1)
		}
	}
}

func (a *shellAnalysis) interpreter(name string, args []word, redirs []redirect, codeFlags string, depth int) {
	for i := 0; i < len(args); i++ {
		w := args[i].text
		if len(w) >= 2 && w[0] == '-' && w[1] != '-' && strings.ContainsRune(codeFlags, rune(w[len(w)-1])) {
			if i+1 < len(args) {
				code := args[i+1]
				if !code.literal || interpreterWrites().MatchString(code.text) {
					a.writeUnknown(name+" inline code may write files", "file_creation", "file_modification")
				}
			}
			return
		}
		if w == "--eval" || w == "--exec" {
			if i+1 < len(args) && (!args[i+1].literal || interpreterWrites().MatchString(args[i+1].text)) {
				a.writeUnknown(name+" inline code may write files", "file_creation", "file_modification")
			}
			return
		}
		if !strings.HasPrefix(w, "-") {
			return // a program file, or a subcommand: executed, not inspected
		}
	}
	for _, r := range redirs {
		if r.heredoc != nil && interpreterWrites().MatchString(*r.heredoc) {
			a.writeUnknown(name+" code on stdin may write files", "file_creation", "file_modification")
		}
	}
}

var gitWriters = map[string]bool{
	"apply": true, "am": true, "checkout": true, "switch": true, "restore": true, "rm": true, "mv": true,
	"reset": true, "stash": true, "clean": true, "merge": true, "rebase": true, "pull": true,
	"cherry-pick": true, "revert": true, "init": true, "clone": true, "worktree": true, "submodule": true,
}

func (a *shellAnalysis) git(args []word) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].text, "-") {
		switch args[i].text {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path":
			i++
		}
		i++
	}
	if i >= len(args) {
		return
	}
	sub := args[i].text
	rest := args[i+1:]
	if !gitWriters[sub] {
		return
	}
	switch sub {
	case "apply":
		if hasAnyFlag(rest, "--check", "--stat", "--numstat", "--summary", "--cached") {
			return
		}
	case "stash":
		if len(rest) > 0 && (rest[0].text == "list" || rest[0].text == "show") {
			return
		}
	case "reset":
		if !hasAnyFlag(rest, "--hard", "--merge", "--keep") {
			return // moves HEAD or the index only
		}
	case "worktree", "submodule":
		if len(rest) > 0 && (rest[0].text == "list" || rest[0].text == "status" || rest[0].text == "summary" || rest[0].text == "foreach") {
			return
		}
	case "rm", "mv":
		if !hasAnyFlag(rest, "--cached") {
			cls := []string{"file_deletion"}
			if sub == "mv" {
				cls = append(cls, "file_creation")
			}
			ops := operands(rest, "")
			if len(ops) > 0 {
				a.each("git "+sub, ops, cls...)
				return
			}
		} else {
			return
		}
	}
	a.writeUnknown("git "+sub+" changes files in the working tree", "file_modification", "file_creation", "file_deletion")
}

func (a *shellAnalysis) curl(args []word) {
	for i := 0; i < len(args); i++ {
		w := args[i].text
		switch {
		case w == "-o" || w == "--output":
			if i+1 < len(args) {
				t := args[i+1]
				if t.text != "-" && !harmless(t) {
					a.write("curl -o "+describe(t), &t, "file_creation")
				}
				i++
			}
		case strings.HasPrefix(w, "--output="):
			t := word{text: strings.TrimPrefix(w, "--output="), literal: args[i].literal}
			if t.text != "-" && !harmless(t) {
				a.write("curl --output "+describe(t), &t, "file_creation")
			}
		case w == "-O" || w == "--remote-name" || w == "--remote-name-all" || (strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.ContainsRune(w, 'O')):
			a.writeUnknown("curl -O saves the download", "file_creation")
		case strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && len(w) > 2 && w[len(w)-1] == 'o':
			if i+1 < len(args) {
				t := args[i+1]
				if t.text != "-" && !harmless(t) {
					a.write("curl -o "+describe(t), &t, "file_creation")
				}
				i++
			}
		}
	}
}

func (a *shellAnalysis) wget(args []word) {
	for i := 0; i < len(args); i++ {
		w := args[i].text
		switch {
		case w == "--spider":
			return
		case w == "-O" || w == "--output-document":
			if i+1 < len(args) {
				t := args[i+1]
				if t.text == "-" || harmless(t) {
					return
				}
				a.write("wget -O "+describe(t), &t, "file_creation")
				return
			}
		case strings.HasPrefix(w, "--output-document="):
			t := word{text: strings.TrimPrefix(w, "--output-document="), literal: args[i].literal}
			if t.text == "-" || harmless(t) {
				return
			}
			a.write("wget -O "+describe(t), &t, "file_creation")
			return
		case strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.HasSuffix(w, "O") && i+1 < len(args):
			t := args[i+1]
			if t.text == "-" || harmless(t) {
				return
			}
			a.write("wget -O "+describe(t), &t, "file_creation")
			return
		case strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.HasSuffix(w, "O-"):
			return
		}
	}
	a.writeUnknown("wget saves the download", "file_creation")
}

func (a *shellAnalysis) tar(args []word) {
	mode := ""
	var file *word
	for i := 0; i < len(args); i++ {
		w := args[i].text
		switch {
		case w == "--extract" || w == "--get":
			mode = "x"
		case w == "--create" || w == "--append" || w == "--update":
			mode = "c"
		case w == "--list":
			mode = "t"
		case w == "-f" || w == "--file":
			if i+1 < len(args) {
				f := args[i+1]
				file = &f
				i++
			}
		case strings.HasPrefix(w, "--file="):
			f := word{text: strings.TrimPrefix(w, "--file="), literal: args[i].literal}
			file = &f
		case strings.HasPrefix(w, "--"):
		case (i == 0 && !strings.HasPrefix(w, "-")) || (strings.HasPrefix(w, "-") && len(w) > 1):
			cluster := strings.TrimPrefix(w, "-")
			for k := 0; k < len(cluster); k++ {
				switch cluster[k] {
				case 'x':
					mode = "x"
				case 'c', 'r', 'u':
					mode = "c"
				case 't':
					if mode == "" {
						mode = "t"
					}
				case 'f':
					if k == len(cluster)-1 && i+1 < len(args) {
						f := args[i+1]
						file = &f
						i++
					}
				}
			}
		}
	}
	switch mode {
	case "x":
		a.writeUnknown("tar extracts files", "file_creation")
	case "c":
		if file == nil {
			return // archive to stdout
		}
		if file.text == "-" {
			return
		}
		a.write("tar writes the archive "+describe(*file), file, "file_creation")
	}
}

func (a *shellAnalysis) find(args []word, depth int) {
	for i := 0; i < len(args); i++ {
		switch args[i].text {
		case "-delete":
			a.writeUnknown("find -delete removes files", "file_deletion")
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				t := args[i+1]
				a.write("find "+args[i].text+" "+describe(t), &t, "file_creation")
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].text != ";" && args[j].text != "+" {
				j++
			}
			sub := &shellAnalysis{}
			sub.exec(args[i+1:j], nil, depth)
			if sub.writes {
				a.writeUnknown("find "+args[i].text+" runs "+firstWord(args[i+1:j]), slices.Sorted(maps.Keys(sub.classes))...)
			}
			i = j
		}
	}
}

func (a *shellAnalysis) formatter(name string, args []word) {
	ops := operands(args, "")
	if len(ops) == 0 {
		a.writeUnknown(name+" rewrites files", "file_modification")
		return
	}
	a.each(name, ops, "file_modification")
}

func (a *shellAnalysis) goTool(args []word) {
	if len(args) == 0 {
		return
	}
	switch args[0].text {
	case "fmt", "generate", "get", "fix":
		a.writeUnknown("go "+args[0].text+" changes source files", "file_modification")
	case "mod":
		if len(args) > 1 {
			switch args[1].text {
			case "tidy", "edit", "vendor", "init", "download":
				if args[1].text == "download" {
					return
				}
				a.writeUnknown("go mod "+args[1].text+" changes module files", "file_modification")
			}
		}
	case "work":
		if len(args) > 1 && args[1].text != "sync" {
			a.writeUnknown("go work "+args[1].text+" changes go.work", "file_modification")
		}
	}
}

// --- argument helpers ----------------------------------------------------

// operands returns the non-option arguments. Short options listed in
// withArg take a value (attached or in the next word).
func operands(args []word, withArg string) []word {
	var out []word
	for i := 0; i < len(args); i++ {
		w := args[i].text
		switch {
		case w == "--" && args[i].literal:
			return append(out, args[i+1:]...)
		case strings.HasPrefix(w, "--") && args[i].literal:
			// --long or --long=value; long options with a separate value
			// are rare among the writers handled here.
		case strings.HasPrefix(w, "-") && len(w) > 1 && args[i].literal:
			last := w[len(w)-1]
			if strings.IndexByte(withArg, last) >= 0 && len(w) == 2 {
				i++
			}
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// skipOptions drops leading options of a wrapper command (sudo -u user,
// nice -n 5, ...). Options in withArg take the next word as their value.
func skipOptions(args []word, withArg string) []word {
	i := 0
	for i < len(args) {
		w := args[i].text
		if w == "--" {
			return args[i+1:]
		}
		if !strings.HasPrefix(w, "-") || len(w) < 2 {
			break
		}
		if !strings.HasPrefix(w, "--") && len(w) == 2 && strings.IndexByte(withArg, w[1]) >= 0 {
			i++
		}
		i++
	}
	return args[i:]
}

func optionValue(args []word, short, long string) (word, bool) {
	for i := 0; i < len(args); i++ {
		w := args[i].text
		if (w == "-"+short || w == long) && i+1 < len(args) {
			return args[i+1], true
		}
		if strings.HasPrefix(w, long+"=") {
			return word{text: strings.TrimPrefix(w, long+"="), literal: args[i].literal}, true
		}
	}
	return word{}, false
}

func hasAnyFlag(args []word, flags ...string) bool {
	for _, w := range args {
		for _, f := range flags {
			if w.text == f || (strings.HasPrefix(f, "--") && strings.HasPrefix(w.text, f+"=")) {
				return true
			}
		}
	}
	return false
}

func hasArg(args []word, s string) bool {
	for _, w := range args {
		if w.text == s {
			return true
		}
	}
	return false
}

// hasShortFlag reports a short option letter anywhere in a cluster before
// the first operand (perl -pi -e, perl -i.bak).
func hasShortFlag(args []word, flag byte) bool {
	for _, w := range args {
		t := w.text
		if !strings.HasPrefix(t, "-") || strings.HasPrefix(t, "--") || len(t) < 2 {
			return false
		}
		for k := 1; k < len(t); k++ {
			if t[k] == flag {
				return true
			}
			if t[k] == 'e' || t[k] == 'E' || t[k] == 'M' || t[k] == 'I' || t[k] == 'm' {
				break // the rest is a value
			}
		}
	}
	return false
}

func firstWord(ws []word) string {
	if len(ws) == 0 || ws[0].text == "" {
		return "a command"
	}
	return ws[0].text
}
