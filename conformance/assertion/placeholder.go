package assertion

import (
	"strings"
)

// StateRoot is what {STATE_ROOT} expands to: the state folder relative to
// the project root.
const StateRoot = ".nexus/state"

// Expand substitutes the two placeholders fixtures may use in file-path
// keys: {STATE_ROOT} and {HARNESS_ID}. Any other {…} token, or a brace
// that is not part of a token, is a *FixtureError.
func Expand(key, harnessID string) (string, error) {
	if !strings.ContainsAny(key, "{}") {
		return key, nil
	}
	var b strings.Builder
	rest := key
	for {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		if rest[i] == '}' {
			return "", fixtureErrorf("path %q has a stray \"}\"", key)
		}
		b.WriteString(rest[:i])
		end := strings.IndexAny(rest[i+1:], "{}")
		if end < 0 || rest[i+1+end] != '}' {
			return "", fixtureErrorf("path %q has an unterminated placeholder", key)
		}
		token := rest[i+1 : i+1+end]
		switch token {
		case "STATE_ROOT":
			b.WriteString(StateRoot)
		case "HARNESS_ID":
			if harnessID == "" {
				return "", fixtureErrorf("path %q uses {HARNESS_ID} but no harness id is configured", key)
			}
			b.WriteString(harnessID)
		default:
			return "", fixtureErrorf("path %q uses unknown placeholder {%s} (only {STATE_ROOT} and {HARNESS_ID} exist)", key, token)
		}
		rest = rest[i+1+end+1:]
	}
}
