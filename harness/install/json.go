package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nexus-harness/nexus/internal/jsonorder"
)

// Installers edit JSON files a host and its users also write (a settings
// file, an MCP servers file).
// They keep their member order and number spellings so the diff shows only
// what nexus changes: the values below are decoded from JSON token by
// token.

// Object is a JSON object that remembers its member order.
type Object = jsonorder.Object

// NewObject returns an empty Object.
func NewObject() *Object { return jsonorder.NewObject() }

// ParseObject decodes one JSON object, numbers kept as written.
func ParseObject(data []byte) (*Object, error) {
	v, err := jsonorder.Parse(data, nil)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*Object)
	if !ok {
		return nil, fmt.Errorf("the top level is not a JSON object")
	}
	return o, nil
}

// Encode renders v with two-space indentation (JSON.stringify(v, null, 2))
// and a final newline.
func Encode(v any) []byte {
	var b bytes.Buffer
	writeValue(&b, v, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, v any, depth int) {
	indent := func(d int) { b.WriteString(strings.Repeat("  ", d)) }
	switch x := v.(type) {
	case *Object:
		if x.Len() == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		i := 0
		for k, v := range x.All() {
			indent(depth + 1)
			writeString(b, k)
			b.WriteString(": ")
			writeValue(b, v, depth+1)
			if i < x.Len()-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
			i++
		}
		indent(depth)
		b.WriteByte('}')
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range x {
			indent(depth + 1)
			writeValue(b, e, depth+1)
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		indent(depth)
		b.WriteByte(']')
	case string:
		writeString(b, x)
	case json.Number:
		b.WriteString(x.String())
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	case int:
		fmt.Fprintf(b, "%d", x)
	default:
		enc, _ := json.Marshal(x)
		b.Write(enc)
	}
}

func writeString(b *bytes.Buffer, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Write(bytes.TrimRight(buf.Bytes(), "\n"))
}

// UnifiedDiff renders a line diff of a and b ("" when equal): common
// leading and trailing lines are trimmed first, so large files with a small
// change stay cheap.
func UnifiedDiff(nameA, nameB string, a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	al := splitLines(a)
	bl := splitLines(b)
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	const ctxLines = 3
	from := max(pre-ctxLines, 0)
	toA := min(len(al)-suf+ctxLines, len(al))
	toB := min(len(bl)-suf+ctxLines, len(bl))
	ops := lcsOps(al[pre:len(al)-suf], bl[pre:len(bl)-suf])
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	startA, startB := from+1, from+1
	if toA == from {
		startA = from // an empty range starts before its position
	}
	if toB == from {
		startB = from
	}
	fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", startA, toA-from, startB, toB-from)
	for _, l := range al[from:pre] {
		out.WriteString(" " + l + "\n")
	}
	for _, op := range ops {
		out.WriteString(op + "\n")
	}
	for _, l := range al[len(al)-suf : toA] {
		out.WriteString(" " + l + "\n")
	}
	return out.String()
}

func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// lcsOps diffs two short line lists into " x", "-x", "+x" lines.
func lcsOps(a, b []string) []string {
	n, m := len(a), len(b)
	if n*m > 4_000_000 {
		// Too large to align: show it as a replacement.
		var out []string
		for _, l := range a {
			out = append(out, "-"+l)
		}
		for _, l := range b {
			out = append(out, "+"+l)
		}
		return out
	}
	dp := make([][]int, n+1)
	for i := range dp {
		dp[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, " "+a[i])
			i++
			j++
		case dp[i+1][j] >= dp[i][j+1]:
			out = append(out, "-"+a[i])
			i++
		default:
			out = append(out, "+"+b[j])
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, "-"+a[i])
	}
	for ; j < m; j++ {
		out = append(out, "+"+b[j])
	}
	return out
}
