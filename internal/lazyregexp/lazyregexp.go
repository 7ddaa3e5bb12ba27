// Package lazyregexp defers compiling package-level regular expressions to
// their first use. nexus runs as a short-lived process on every agent hook,
// and regexps compiled in package initialisers are paid by every process,
// including the ones that never match anything (a bounded repetition such as
// {1,128} alone costs over half a millisecond to compile).
package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on first use.
type Regexp struct {
	pattern string
	once    sync.Once
	re      *regexp.Regexp
}

// New returns a lazily compiled expression. An invalid pattern panics on
// first use, as regexp.MustCompile would at initialisation.
func New(pattern string) *Regexp { return &Regexp{pattern: pattern} }

// Re returns the compiled expression.
func (r *Regexp) Re() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.pattern) })
	return r.re
}
