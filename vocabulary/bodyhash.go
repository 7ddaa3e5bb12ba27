package vocabulary

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// BodyHash computes a body.md's manifest hash with nexus-core's exact byte
// rule (digest §7.5): CRLF→LF, ECMAScript trimEnd, one trailing LF, SHA-256,
// "sha256:" prefix. Go's unicode.IsSpace differs from trimEnd (U+0085,
// U+FEFF), hence the explicit set.
func BodyHash(b []byte) string {
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	s = strings.TrimRightFunc(s, jsTrimSpace) + "\n"
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func jsTrimSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}
