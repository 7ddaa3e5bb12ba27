// Package doclinks checks the links of the repository's documentation
// (README.md and docs/*.md): each resolves inside the repository (a file
// that exists, an anchor that one of its headings makes) or is a public
// URL, and no text names a path of one machine. Its test runs it.
package doclinks

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Problem is one link (or text) that does not hold.
type Problem struct {
	File string // relative to the repository
	Line int
	What string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.What) }

var (
	// [text](target "title") and ![alt](target); target without spaces.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// [label]: target
	refLink = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+.*)?$`)
	// Absolute paths of the machine the docs were written on.
	localPath = regexp.MustCompile(`(^|[\s("'` + "`" + `=])/(work|Users/[^/\s]+|home/(?:[a-z]+)/(?:src|work|go))/`)
	// The reference material kept beside the repository on the machine it
	// was written on (../shared/...), which a reader of the repository
	// does not have.
	besideRepo = regexp.MustCompile(`(\.\./|/)?shared/(spec|design|fixtures|peers|nexus-core)`)
	heading    = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	fence      = regexp.MustCompile("^\\s{0,3}(```|~~~)")
)

// Check checks README.md and every docs/*.md beneath root.
func Check(root string) ([]Problem, error) {
	files := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		files = append(files, filepath.ToSlash(rel))
	}
	anchors := map[string]map[string]bool{}
	var out []Problem
	for _, f := range files {
		ps, err := checkFile(root, f, anchors)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

func checkFile(root, file string, anchors map[string]map[string]bool) ([]Problem, error) {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return nil, err
	}
	var out []Problem
	inFence := false
	for i, line := range strings.Split(string(b), "\n") {
		n := i + 1
		if m := localPath.FindString(line); m != "" {
			out = append(out, Problem{file, n, fmt.Sprintf("names a path of one machine (%s); say what it is instead", strings.TrimSpace(m))})
		} else if m := besideRepo.FindString(line); m != "" {
			out = append(out, Problem{file, n, fmt.Sprintf("names %s, which is not in the repository; name what is (or a public URL)", m)})
		}
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(stripCode(line), -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, t := range targets {
			if what := checkTarget(root, file, t, anchors); what != "" {
				out = append(out, Problem{file, n, what})
			}
		}
	}
	return out, nil
}

// stripCode blanks inline code spans, whose brackets are not links.
func stripCode(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			b.WriteRune(' ')
			continue
		}
		if in {
			b.WriteRune(' ')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func checkTarget(root, from, target string, anchors map[string]map[string]bool) string {
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		switch u.Scheme {
		case "http", "https":
			h := u.Hostname()
			if h == "localhost" || strings.HasPrefix(h, "127.") || h == "0.0.0.0" || h == "::1" || !strings.Contains(h, ".") {
				return fmt.Sprintf("link %s is not a public URL", target)
			}
			return ""
		case "mailto":
			return ""
		}
		return fmt.Sprintf("link %s: only http(s) and mailto links leave the repository", target)
	}
	path, frag, _ := strings.Cut(target, "#")
	if strings.HasPrefix(path, "/") {
		return fmt.Sprintf("link %s is an absolute path; link relative to %s", target, from)
	}
	dest := from
	if path != "" {
		dest = filepath.ToSlash(filepath.Join(filepath.Dir(from), path))
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return fmt.Sprintf("link %s leads out of the repository", target)
		}
		st, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest)))
		if err != nil {
			return fmt.Sprintf("link %s: %s does not exist in the repository", target, dest)
		}
		if st.IsDir() || frag == "" || !strings.HasSuffix(dest, ".md") {
			return ""
		}
	}
	if frag == "" {
		return ""
	}
	a, err := anchorsOf(root, dest, anchors)
	if err != nil {
		return err.Error()
	}
	if !a[frag] {
		return fmt.Sprintf("link %s: %s has no heading with the anchor #%s", target, dest, frag)
	}
	return ""
}

// anchorsOf lists the anchors GitHub makes of a Markdown file's headings.
func anchorsOf(root, file string, cache map[string]map[string]bool) (map[string]bool, error) {
	if a, ok := cache[file]; ok {
		return a, nil
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return nil, err
	}
	a := map[string]bool{}
	count := map[string]int{}
	inFence := false
	for _, line := range strings.Split(string(b), "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := Slug(m[2])
		if c := count[s]; c > 0 {
			a[fmt.Sprintf("%s-%d", s, c)] = true
		} else {
			a[s] = true
		}
		count[s]++
	}
	cache[file] = a
	return a, nil
}

// Slug is GitHub's anchor for a heading: lower case, inline markup and
// punctuation dropped (but '-' and '_'), spaces made '-'.
func Slug(h string) string {
	// Links in headings keep their text.
	h = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
