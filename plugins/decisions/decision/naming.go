package decision

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nexus-harness/nexus/plugins/decisions/internal/pytext"
)

// SlugMaxLength is the longest slug a file name carries (code points).
const SlugMaxLength = 60

// ExtractNumber reads a decision number from a stem, file name or id
// ("042-title", "042-title.md", "decision-042", "D42", "42"), as the
// reference's extract_decision_number does. ok is false when there is no
// number. Digits that str.isdigit accepts but int() does not (superscripts)
// give an error, as in the reference.
func ExtractNumber(id string) (n int, ok bool, err error) {
	s := strings.TrimSuffix(id, ".md")
	lower := pytext.Lower(s)
	rs := []rune(s)
	switch {
	case strings.HasPrefix(lower, "decision-"):
		// Only ASCII letters lower-case to "decision-", so the prefix is
		// nine code points of s as well.
		rs = rs[9:]
	case len(rs) > 1 && (rs[0] == 'd' || rs[0] == 'D') && pytext.IsDigit(rs[1]):
		rs = rs[1:]
	}
	i := 0
	for i < len(rs) && pytext.IsDigit(rs[i]) {
		i++
	}
	if i == 0 {
		return 0, false, nil
	}
	digits := string(rs[:i])
	canonical, err := pyInt(digits)
	if err != nil {
		return 0, false, err
	}
	v, err := strconv.Atoi(canonical)
	if err != nil {
		return 0, false, fmt.Errorf("decision number %s is too large", canonical)
	}
	return v, true, nil
}

// NumberOf is ExtractNumber without the error: ids that do not yield a
// number report ok=false.
func NumberOf(id string) (int, bool) {
	n, ok, err := ExtractNumber(id)
	return n, ok && err == nil
}

// Slugify makes the file-name slug of a title: Python-lower-cased, every
// run of non-alphanumeric characters a single dash, trimmed, and cut to 60
// code points at the last dash.
func Slugify(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range pytext.Lower(title) {
		if pytext.IsAlnum(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	slug := b.String()
	if pytext.Len(slug) <= SlugMaxLength {
		return slug
	}
	cut := pytext.Head(slug, SlugMaxLength)
	if i := strings.LastIndexByte(cut, '-'); i >= 0 {
		return cut[:i]
	}
	return cut
}

// Stem is the file stem of a decision: the zero-padded number and the slug.
func Stem(num int, slug string) string { return fmt.Sprintf("%03d-%s", num, slug) }
