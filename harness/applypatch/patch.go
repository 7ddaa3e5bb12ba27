// Package applypatch reads the apply_patch format: the patch language a
// host's patch tool takes (Codex's apply_patch tool and shell command,
// OpenCode's apply_patch tool for GPT-style models), for the gate and
// files_touched: which files a patch adds, updates, moves or deletes. It
// names files; it never applies a patch.
package applypatch

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Codex's patch format (the apply_patch tool, and the apply_patch command
// its shell runs), as Codex 0.169.0 parses it (codex-rs/apply-patch
// parser.rs, lenient mode):
//
//	patch  = "*** Begin Patch" LF hunk* "*** End Patch" [LF]
//	hunk   = "*** Add File: " path LF ("+" line LF)*
//	       | "*** Delete File: " path LF
//	       | "*** Update File: " path LF ["*** Move to: " path LF] chunk+
//	chunk  = ["@@" | "@@ " context] LF ((" " | "+" | "-") line LF | LF)+ ["*** End of File" LF]
//
// The whole text is trimmed first; the begin and end markers and the hunk
// headers may carry surrounding whitespace; the first chunk of an update may
// omit its "@@" line; blank lines between chunks are skipped. A patch
// wrapped in a heredoc's own lines (<<EOF, <<'EOF' or <<"EOF" first, a
// line ending in EOF last) is unwrapped. Only the file operations matter
// here: the chunks are checked for form, not applied.

// Patch markers.
const (
	beginPatch  = "*** Begin Patch"
	endPatch    = "*** End Patch"
	addFile     = "*** Add File: "
	deleteFile  = "*** Delete File: "
	updateFile  = "*** Update File: "
	moveTo      = "*** Move to: "
	endOfFile   = "*** End of File"
	contextMark = "@@ "
	emptyMark   = "@@"
)

// OpKind is what a patch does to one file.
type OpKind string

// The operations of a patch.
const (
	OpAdd    OpKind = "add"    // create the file (or overwrite it) with new content
	OpUpdate OpKind = "update" // change the file; with MoveTo, also rename it
	OpDelete OpKind = "delete" // remove the file
)

// FileOp is one file operation of a patch. Paths are as the patch names
// them: relative to the directory the patch is applied in (Codex's working
// directory, or the `cd` directory of the shell form, already joined), or
// absolute.
type FileOp struct {
	Kind OpKind
	Path string
	// MoveTo is the new name of an updated file ("*** Move to:"); "" when
	// the file stays where it is.
	MoveTo string
}

// Effect is what one operation does to one path, in the gate's terms.
type Effect struct {
	Path string
	// Action is "write" (a file created, or a move's destination), "edit"
	// (a file changed in place) or "remove" (a file deleted, or a move's
	// source).
	Action string
}

// Effect actions.
const (
	ActionWrite  = "write"
	ActionEdit   = "edit"
	ActionRemove = "remove"
)

// Effects lists the paths an operation writes, edits or removes. A move
// removes its source and writes its destination (with the source's
// content, edited).
func (op FileOp) Effects() []Effect {
	switch {
	case op.Kind == OpAdd:
		return []Effect{{op.Path, ActionWrite}}
	case op.Kind == OpDelete:
		return []Effect{{op.Path, ActionRemove}}
	case op.MoveTo != "":
		return []Effect{{op.Path, ActionRemove}, {op.MoveTo, ActionWrite}}
	}
	return []Effect{{op.Path, ActionEdit}}
}

// Touched lists the files a patch leaves created or modified, in order,
// each once: added and updated files and move destinations (what
// files_touched records). Deleted files and move sources are not listed.
func Touched(ops []FileOp) []string {
	var out []string
	seen := map[string]bool{}
	for _, op := range ops {
		for _, e := range op.Effects() {
			if e.Action != ActionRemove && !seen[e.Path] {
				seen[e.Path] = true
				out = append(out, e.Path)
			}
		}
	}
	return out
}

// ParseError is a patch nexus could not read. The gate fails closed on it:
// a call whose files cannot be named does not run.
type ParseError struct {
	Line int // 1-based line of the problem in the (trimmed) patch; 0 = the whole patch
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("invalid patch at line %d: %s", e.Line, e.Msg)
	}
	return "invalid patch: " + e.Msg
}

// maxPatchLines bounds the patch text nexus reads (a model's patch is
// seldom more than a few thousand lines).
const maxPatchLines = 200_000

// Parse reads the file operations of a patch in Codex's format. Any
// text Codex itself would reject is an error, and so is an operation on an
// empty path or a path holding a NUL byte, which no file can have.
func Parse(text string) ([]FileOp, error) {
	lines := splitLines(strings.TrimSpace(text))
	if len(lines) > maxPatchLines {
		return nil, &ParseError{Msg: fmt.Sprintf("more than %d lines", maxPatchLines)}
	}
	body, first, err := patchBody(lines)
	if err != nil {
		return nil, err
	}
	var ops []FileOp
	for i := 0; i < len(body); {
		op, n, err := parseHunk(body[i:], first+i)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		i += n
	}
	return ops, nil
}

// splitLines splits like Rust's str::lines: on "\n", a "\r" before it
// dropped, no empty last line for a final "\n".
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// patchBody checks the begin and end markers (unwrapping a heredoc's lines
// when the plain check fails, as Codex's lenient mode does) and returns the
// lines between them and the line number of the first.
func patchBody(lines []string) ([]string, int, error) {
	body, err := markers(lines)
	if err == nil {
		return body, 2, nil
	}
	if n := len(lines); n >= 4 {
		first := lines[0]
		if (first == "<<EOF" || first == "<<'EOF'" || first == `<<"EOF"`) && strings.HasSuffix(lines[n-1], "EOF") {
			inner, err := markers(lines[1 : n-1])
			if err != nil {
				return nil, 0, err
			}
			return inner, 3, nil
		}
	}
	return nil, 0, err
}

func markers(lines []string) ([]string, error) {
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != beginPatch {
		return nil, &ParseError{Msg: "the first line of the patch must be '" + beginPatch + "'"}
	}
	if len(lines) < 2 || strings.TrimSpace(lines[len(lines)-1]) != endPatch {
		return nil, &ParseError{Msg: "the last line of the patch must be '" + endPatch + "'"}
	}
	return lines[1 : len(lines)-1], nil
}

// parseHunk reads one hunk at the start of lines (line is the number of
// lines[0]) and returns its operation and how many lines it spans.
func parseHunk(lines []string, line int) (FileOp, int, error) {
	head := strings.TrimSpace(lines[0])
	switch {
	case strings.HasPrefix(head, addFile):
		op := FileOp{Kind: OpAdd, Path: strings.TrimPrefix(head, addFile)}
		n := 1
		for n < len(lines) && strings.HasPrefix(lines[n], "+") {
			n++
		}
		return op, n, checkPath(op.Path, line)
	case strings.HasPrefix(head, deleteFile):
		op := FileOp{Kind: OpDelete, Path: strings.TrimPrefix(head, deleteFile)}
		return op, 1, checkPath(op.Path, line)
	case strings.HasPrefix(head, updateFile):
		op := FileOp{Kind: OpUpdate, Path: strings.TrimPrefix(head, updateFile)}
		if err := checkPath(op.Path, line); err != nil {
			return op, 0, err
		}
		n := 1
		if n < len(lines) && strings.HasPrefix(lines[n], moveTo) {
			op.MoveTo = strings.TrimPrefix(lines[n], moveTo)
			if err := checkPath(op.MoveTo, line+n); err != nil {
				return op, 0, err
			}
			n++
		}
		chunks := 0
		for n < len(lines) {
			if strings.TrimSpace(lines[n]) == "" {
				n++ // blank lines may separate chunks
				continue
			}
			if strings.HasPrefix(lines[n], "*") {
				break // the next hunk
			}
			m, err := parseChunk(lines[n:], line+n, chunks == 0)
			if err != nil {
				return op, 0, err
			}
			chunks++
			n += m
		}
		if chunks == 0 {
			return op, 0, &ParseError{Line: line, Msg: fmt.Sprintf("the update of %q has no changes", op.Path)}
		}
		return op, n, nil
	}
	return FileOp{}, 0, &ParseError{Line: line, Msg: fmt.Sprintf("%q is not a hunk header (expected '%s<path>', '%s<path>' or '%s<path>')",
		clip(head), addFile, deleteFile, updateFile)}
}

// parseChunk checks one change chunk of an update and returns its length.
// The first chunk may start without its "@@" line.
func parseChunk(lines []string, line int, first bool) (int, error) {
	start := 0
	switch {
	case lines[0] == emptyMark, strings.HasPrefix(lines[0], contextMark):
		start = 1
	case !first:
		return 0, &ParseError{Line: line, Msg: fmt.Sprintf("expected a chunk to start with '@@', got %q", clip(lines[0]))}
	}
	if start >= len(lines) {
		return 0, &ParseError{Line: line + 1, Msg: "a chunk holds no lines"}
	}
	n := 0
	for _, l := range lines[start:] {
		if l == endOfFile {
			if n == 0 {
				return 0, &ParseError{Line: line + 1, Msg: "a chunk holds no lines"}
			}
			n++
			break
		}
		if l != "" && l[0] != ' ' && l[0] != '+' && l[0] != '-' {
			if n == 0 {
				return 0, &ParseError{Line: line + 1, Msg: fmt.Sprintf("unexpected line %q in a chunk: lines start with ' ', '+' or '-'", clip(l))}
			}
			break // the next chunk or hunk
		}
		n++
	}
	return n + start, nil
}

func checkPath(p string, line int) error {
	switch {
	case p == "":
		return &ParseError{Line: line, Msg: "a file operation names no path"}
	case strings.ContainsRune(p, 0):
		return &ParseError{Line: line, Msg: "a path holds a NUL byte"}
	}
	return nil
}

// clip shortens a piece of the patch quoted in an error.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// within joins a relative patch path to the directory the patch is
// applied in ("" = the working directory); absolute paths stay as they are.
func within(dir, p string) string {
	if dir == "" || p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
