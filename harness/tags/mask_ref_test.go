package tags

import (
	"regexp"
	"strings"
)

// The token pattern and the mask as they were written first (the mask
// quadratic in the worst case, but both obviously right): FuzzDetect checks
// the linear scanner and mask against them.

// refToken is nexus-core's bracket token pattern (digest §4.6 step 2).
var refToken = regexp.MustCompile(`\[([a-z][a-z0-9-]*)(?::([^\]]+))?\]`)

type refRegion struct {
	start, end int
	reason     string
}

type refMask []refRegion

func (m refMask) reason(start, end int) string {
	for _, r := range m {
		if start < r.end && end > r.start {
			return r.reason
		}
	}
	return ""
}

// refMaskText is maskText as first written.
func refMaskText(msg string) refMask {
	var mask refMask
	var open struct {
		on    bool
		char  byte
		n     int
		start int
	}
	lineStart := 0
	var plain []refRegion // line spans outside fences
	for lineStart <= len(msg) {
		lineEnd := strings.IndexByte(msg[lineStart:], '\n')
		if lineEnd < 0 {
			lineEnd = len(msg)
		} else {
			lineEnd += lineStart
		}
		line := msg[lineStart:lineEnd]
		ch, n, rest := fence(line)
		switch {
		case open.on:
			if ch == open.char && n >= open.n && strings.TrimSpace(rest) == "" {
				mask = append(mask, refRegion{open.start, lineEnd, "inside fenced code"})
				open.on = false
			}
		case n > 0 && !(ch == '`' && strings.ContainsRune(rest, '`')):
			open.on, open.char, open.n, open.start = true, ch, n, lineStart
		default:
			trimmed := strings.TrimLeft(line, " \t")
			if strings.HasPrefix(trimmed, ">") {
				mask = append(mask, refRegion{lineStart, lineEnd, "inside quoted text"})
			} else {
				plain = append(plain, refRegion{start: lineStart, end: lineEnd})
			}
		}
		if lineEnd == len(msg) {
			break
		}
		lineStart = lineEnd + 1
	}
	if open.on {
		mask = append(mask, refRegion{open.start, len(msg), "inside fenced code"})
	}
	for _, p := range plain {
		mask = append(mask, refInlineRegions(msg, p.start, p.end)...)
	}
	return mask
}

// refInlineRegions masks code spans and double-quoted text within one line.
func refInlineRegions(msg string, start, end int) []refRegion {
	var out []refRegion
	i := start
	quoteOpen := -1
	var quoteClose string
	for i < end {
		c := msg[i]
		switch {
		case c == '\\' && i+1 < end:
			i += 2
			continue
		case c == '`':
			n := 0
			for i+n < end && msg[i+n] == '`' {
				n++
			}
			// The span closes at the next run of exactly n backticks.
			j := i + n
			closed := -1
			for j < end {
				if msg[j] != '`' {
					j++
					continue
				}
				m := 0
				for j+m < end && msg[j+m] == '`' {
					m++
				}
				if m == n {
					closed = j + m
					break
				}
				j += m
			}
			if closed < 0 {
				i += n // literal backticks
				continue
			}
			out = append(out, refRegion{i, closed, "inside inline code"})
			i = closed
			continue
		case quoteOpen < 0 && (c == '"' || strings.HasPrefix(msg[i:end], "“")):
			quoteOpen = i
			if c == '"' {
				quoteClose = `"`
				i++
			} else {
				quoteClose = "”"
				i += len("“")
			}
			continue
		case quoteOpen >= 0 && strings.HasPrefix(msg[i:end], quoteClose):
			i += len(quoteClose)
			out = append(out, refRegion{quoteOpen, i, "inside quoted text"})
			quoteOpen = -1
			continue
		}
		i++
	}
	return out
}
