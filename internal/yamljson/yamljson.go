// Package yamljson decodes YAML into JSON-shaped Go values (map[string]any,
// []any, string, int64, float64, bool, nil) through yaml.Node, recording the
// line and column of every value by JSON pointer.
//
// Decoding into `any` directly is unsafe for schema validation: yaml.v3
// produces map[any]any for non-string keys and time.Time for unquoted dates,
// which JSON Schema validators reject or misread. Walking the node tree keeps
// every key a string, keeps timestamps as the text the author wrote, and
// gives each error a file:line:col.
package yamljson

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Pos is a 1-based position in the source.
type Pos struct {
	Line, Col int
}

// Doc is a decoded YAML document.
type Doc struct {
	Value any
	// Positions maps a JSON pointer ("" for the root, "/tags/0/id") to the
	// position of the node holding that value. For object members the key's
	// position is recorded under the member's pointer.
	Positions map[string]Pos
}

// PosOf returns the position recorded for pointer, falling back to the
// nearest ancestor that has one (and 1:1 when nothing does).
func (d *Doc) PosOf(pointer string) Pos {
	for {
		if p, ok := d.Positions[pointer]; ok {
			return p
		}
		i := strings.LastIndexByte(pointer, '/')
		if i < 0 {
			return Pos{1, 1}
		}
		pointer = pointer[:i]
	}
}

// SyntaxError is a YAML error with a position.
type SyntaxError struct {
	Pos Pos
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg) }

// Decode parses a single YAML document. An empty document decodes to nil.
func Decode(data []byte) (*Doc, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, errEOF()) {
			return &Doc{Positions: map[string]Pos{}}, nil
		}
		return nil, convertYAMLError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &SyntaxError{Pos{extra.Line, extra.Column}, "more than one YAML document in the file; expected exactly one"}
	}
	d := &Doc{Positions: map[string]Pos{}}
	w := walker{doc: d}
	v, err := w.node(&root, "", 0)
	if err != nil {
		return nil, err
	}
	d.Value = v
	return d, nil
}

func errEOF() error {
	var n yaml.Node
	return yaml.NewDecoder(bytes.NewReader(nil)).Decode(&n)
}

// convertYAMLError pulls "line N:" out of yaml.v3's messages so every error
// carries a position.
func convertYAMLError(err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := 0
	if strings.HasPrefix(msg, "line ") {
		rest := msg[len("line "):]
		if i := strings.IndexByte(rest, ':'); i > 0 {
			if n, e := strconv.Atoi(rest[:i]); e == nil {
				line = n
				msg = strings.TrimSpace(rest[i+1:])
			}
		}
	}
	if line == 0 {
		line = 1
	}
	return &SyntaxError{Pos{line, 1}, msg}
}

type walker struct {
	doc   *Doc
	nodes int
}

// maxNodes bounds the values produced, so alias expansion ("billion laughs")
// cannot blow up memory.
const maxNodes = 1_000_000

// maxDepth bounds nesting (and alias expansion recursion) so hostile input
// cannot exhaust the stack.
const maxDepth = 200

func (w *walker) node(n *yaml.Node, ptr string, depth int) (any, error) {
	if depth > maxDepth {
		return nil, &SyntaxError{Pos{n.Line, n.Column}, "nesting too deep"}
	}
	if w.nodes++; w.nodes > maxNodes {
		return nil, &SyntaxError{Pos{n.Line, n.Column}, "document expands to too many values (alias expansion?)"}
	}
	if _, seen := w.doc.Positions[ptr]; !seen {
		w.doc.Positions[ptr] = Pos{n.Line, n.Column}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return w.node(n.Content[0], ptr, depth+1)
	case yaml.AliasNode:
		return w.node(n.Alias, ptr, depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			v, err := w.node(c, ptr+"/"+strconv.Itoa(i), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		if err := w.mapping(n, ptr, depth, out, map[string]bool{}); err != nil {
			return nil, err
		}
		return out, nil
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil, &SyntaxError{Pos{n.Line, n.Column}, "unsupported YAML node"}
}

func (w *walker) mapping(n *yaml.Node, ptr string, depth int, out map[string]any, explicit map[string]bool) error {
	// Merge keys (<<) supply defaults; explicit keys win regardless of order.
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return &SyntaxError{Pos{k.Line, k.Column}, "mapping keys must be plain scalars"}
		}
		key := k.Value
		if explicit[key] {
			return &SyntaxError{Pos{k.Line, k.Column}, fmt.Sprintf("duplicate key %q", key)}
		}
		explicit[key] = true
		child := ptr + "/" + escapePointer(key)
		w.doc.Positions[child] = Pos{k.Line, k.Column}
		val, err := w.node(v, child, depth+1)
		if err != nil {
			return err
		}
		out[key] = val
	}
	for _, m := range merges {
		srcs := []*yaml.Node{m}
		if m.Kind == yaml.AliasNode {
			srcs = []*yaml.Node{m.Alias}
		}
		if srcs[0].Kind == yaml.SequenceNode {
			srcs = srcs[0].Content
		}
		for _, s := range srcs {
			if s.Kind == yaml.AliasNode {
				s = s.Alias
			}
			if s.Kind != yaml.MappingNode {
				return &SyntaxError{Pos{s.Line, s.Column}, "merge key (<<) value must be a mapping"}
			}
			tmp := map[string]any{}
			if err := w.mapping(s, ptr, depth+1, tmp, map[string]bool{}); err != nil {
				return err
			}
			for k, v := range tmp {
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
		}
	}
	return nil
}

func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, &SyntaxError{Pos{n.Line, n.Column}, err.Error()}
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		bi, ok := new(big.Int).SetString(strings.ReplaceAll(n.Value, "_", ""), 0)
		if !ok {
			return nil, &SyntaxError{Pos{n.Line, n.Column}, fmt.Sprintf("invalid integer %q", n.Value)}
		}
		f, _ := new(big.Float).SetInt(bi).Float64()
		return f, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, &SyntaxError{Pos{n.Line, n.Column}, err.Error()}
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, &SyntaxError{Pos{n.Line, n.Column}, fmt.Sprintf("%q is not representable in JSON", n.Value)}
		}
		return f, nil
	default:
		// !!str, !!timestamp, !!binary and custom tags keep their text.
		return n.Value, nil
	}
}

func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
