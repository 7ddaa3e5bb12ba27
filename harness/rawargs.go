package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/jsonscan"
)

// DecodeArgs decodes a tool call's arguments from the JSON text the client
// sent (a JSON object), for a door that has the text (the MCP server).
// Before anything is decoded it checks, on the text, the rules that bound
// what decoding would cost: every parameter must be one the tool's schema
// names (unless the schema admits others), and no array or object may hold
// more than MaxItems members. Numbers are decoded as their text
// (json.Number), so that checkArgs decides integer-ness on what was sent.
// The arguments then go through CallTool and friends like any others.
//
// The caller bounds the text's size and depth (the MCP message limits).
// A refusal is a *tools.Error naming the parameter and the limit.
func (e *Engine) DecodeArgs(name string, raw []byte) (map[string]any, error) {
	t, ok := e.Tool(name)
	if !ok {
		return nil, fmt.Errorf("unknown tool %q", name)
	}
	var doc map[string]any
	if len(t.Params) > 0 {
		cp := params.get(t.Params)
		if cp.err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, cp.err)
		}
		doc = cp.doc
	}
	if err := jsonscan.CheckDepth(raw, jsonscan.MaxDepth); err != nil {
		return nil, &tools.Error{Message: "the arguments are " + err.Error()}
	}
	if err := prescan(raw, doc); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return nil, &tools.Error{Message: "the arguments are not a JSON object: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	return args, nil
}

// seg is one step of the path to a value: a member name or an index.
type seg struct {
	name  string
	index int
	isIdx bool
}

// maxUnknownNamed bounds how many unknown parameters a refusal names; the
// rest are counted.
const maxUnknownNamed = 8

// prescan reads the arguments' tokens once, decoding nothing but member
// names, and refuses unknown parameters and oversized arrays and objects
// (with the exact count, read on without keeping anything).
func prescan(raw []byte, doc map[string]any) error {
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil {
		return notObject(err)
	} else if tok.Kind() != '{' {
		return &tools.Error{Message: "the arguments must be a JSON object"}
	}
	var unknown []string
	more := 0
	// path[d-1] is the member name or index of the value being read at
	// depth d: path[:d-1] locates the container at depth d.
	var path []seg
	for dec.StackDepth() > 0 {
		tok, err := dec.ReadToken()
		if err != nil {
			return notObject(err)
		}
		k := tok.Kind()
		if k == '}' || k == ']' {
			continue
		}
		// p is the depth of the container this token is a member of.
		p := dec.StackDepth()
		if k == '{' || k == '[' {
			p--
		}
		ck, n := dec.StackIndex(p)
		if ck == '{' && n%2 == 1 { // a member name
			name := tok.String()
			path = append(path[:p-1], seg{name: name})
			if p == 1 && unknownParam(doc, name) {
				if len(unknown) < maxUnknownNamed {
					unknown = append(unknown, name)
				} else {
					more++
				}
				if err := dec.SkipValue(); err != nil {
					return notObject(err)
				}
			}
			continue
		}
		if ck == '[' {
			path = append(path[:p-1], seg{index: int(n - 1), isIdx: true})
		}
		if countOf(ck, n) > MaxItems {
			return overflow(dec, path[:p-1], ck, p)
		}
	}
	if len(unknown) > 0 {
		msgs := make([]string, len(unknown))
		for i, u := range unknown {
			msgs[i] = unknownMessage(u, doc)
		}
		if more > 0 {
			msgs = append(msgs, fmt.Sprintf("and %d more unknown parameters", more))
		}
		return &tools.Error{Message: strings.Join(msgs, "; ")}
	}
	return nil
}

func notObject(err error) error {
	return &tools.Error{Message: "the arguments are not a JSON object: " + err.Error()}
}

// countOf is how many members a container holds once n of its tokens are
// read (an object's names and values count apart).
func countOf(kind jsontext.Kind, n int64) int64 {
	if kind == '{' {
		return (n + 1) / 2
	}
	return n
}

// overflow reads the rest of an oversized container, the one at depth p
// that path locates, keeping nothing, to report its size.
func overflow(dec *jsontext.Decoder, path []seg, kind jsontext.Kind, p int) error {
	for dec.StackDepth() > p { // out of the member being read
		if _, err := dec.ReadToken(); err != nil {
			return notObject(err)
		}
	}
	for k := dec.PeekKind(); k != '}' && k != ']' && k != 0; k = dec.PeekKind() {
		if err := dec.SkipValue(); err != nil {
			return notObject(err)
		}
	}
	_, n := dec.StackIndex(p)
	what := "items"
	if kind == '{' {
		what = "members"
	}
	if len(path) == 0 {
		return &tools.Error{Message: fmt.Sprintf("the arguments have %d members; the limit is %d", countOf(kind, n), MaxItems)}
	}
	return &tools.Error{Message: fmt.Sprintf("parameter %q has %d %s; the limit is %d", segPath(path), countOf(kind, n), what, MaxItems)}
}

// segPath renders a path as paramPath does: issues[0], how_summary.architect.
func segPath(path []seg) string {
	loc := make([]string, len(path))
	for i, s := range path {
		if s.isIdx {
			loc[i] = strconv.Itoa(s.index)
		} else {
			loc[i] = s.name
		}
	}
	return paramPath(loc)
}

// unknownParam applies the unknown-parameter rule of every tool nexus
// serves: a schema that names its parameters ("properties") takes only
// those, unless it admits others itself (additionalProperties other than
// false, or patternProperties, which the schema check then applies). A
// schema that names none takes anything.
func unknownParam(doc map[string]any, name string) bool {
	props, ok := doc["properties"].(map[string]any)
	if !ok {
		return false
	}
	if _, known := props[name]; known {
		return false
	}
	if _, ok := doc["patternProperties"]; ok {
		return false
	}
	extra, ok := doc["additionalProperties"]
	return !ok || extra == false
}

// unknownMessage is the refusal of an unknown parameter.
func unknownMessage(name string, doc map[string]any) string {
	return fmt.Sprintf("unknown parameter %q (this tool takes: %s)", clip(name), strings.Join(propertyNames(doc), ", "))
}

// checkUnknown applies unknownParam to decoded arguments. nexus's own
// schemas refuse other members themselves (the schema check then names
// them with every other problem); this catches them for a plugin's schema,
// which need not say.
func checkUnknown(doc map[string]any, args map[string]any) error {
	if _, own := doc["additionalProperties"]; own {
		return nil
	}
	var msgs []string
	for name := range args {
		if unknownParam(doc, name) {
			msgs = append(msgs, unknownMessage(name, doc))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	sort.Strings(msgs)
	return &tools.Error{Message: strings.Join(msgs, "; ")}
}
