// Package pyyaml reads and writes YAML the way PyYAML 6 does for the Nauro
// decision frontmatter: yaml.safe_load's YAML 1.1 implicit typing of plain
// scalars (yes/no booleans, octal 070, base-60 1:30, timestamps, ...) and
// yaml.safe_dump's choice and layout of string scalars.
//
// Parsing is delegated to gopkg.in/yaml.v3, whose node tree keeps each
// scalar's style; only the typing of plain scalars is redone here, because
// yaml.v3 resolves them with YAML 1.2 rules.
package pyyaml

import (
	"regexp"
	"sync"
)

// Kind is the type PyYAML's implicit resolvers give a plain scalar.
type Kind int

// The implicit kinds, in PyYAML's resolver order.
const (
	KindStr Kind = iota
	KindBool
	KindFloat
	KindInt
	KindMerge
	KindNull
	KindTimestamp
	KindValue
)

var (
	reBool = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	})
	// The float and int patterns are PyYAML's, verbatim.
	reFloat = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	})
	reInt = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	})
	reNull = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:~|null|Null|NULL|)$`) })
	reTime = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)
	})
)

type resolver struct {
	first string
	re    func() *regexp.Regexp
	kind  Kind
}

// resolvers in the order PyYAML registers them; each is tried only when the
// scalar starts with one of its first characters.
var resolvers = []resolver{
	{"yYnNtTfFoO", reBool, KindBool},
	{"-+0123456789.", reFloat, KindFloat},
	{"-+0123456789", reInt, KindInt},
	{"<", sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:<<)$`) }), KindMerge},
	{"~nN", reNull, KindNull},
	{"0123456789", reTime, KindTimestamp},
	{"=", sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:=)$`) }), KindValue},
}

// Resolve returns the kind PyYAML gives s written as a plain scalar.
func Resolve(s string) Kind {
	if s == "" {
		return KindNull
	}
	for _, r := range resolvers {
		if !containsByte(r.first, s[0]) {
			continue
		}
		// Python's re.match lets $ match before one final newline.
		if r.re().MatchString(s) || (s[len(s)-1] == '\n' && r.re().MatchString(s[:len(s)-1])) {
			return r.kind
		}
	}
	return KindStr
}

func containsByte(set string, c byte) bool {
	for i := 0; i < len(set); i++ {
		if set[i] == c {
			return true
		}
	}
	return false
}
