package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing/fstest"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/nexus-harness/nexus/harness/tools"
	"github.com/nexus-harness/nexus/internal/jsonscan"
	"github.com/nexus-harness/nexus/schema"
)

// Tool parameters are validated by nexus, not by the MCP library (whose
// validation is opt-in, unformatted and skips what it cannot compile), so
// the MCP server and the in-process conformance runner share one check.
//
// Every distinct parameter schema is compiled once per process, on the
// first call of a tool that has it: hook processes, which never call a
// tool, pay nothing.

// paramBase is the URL space parameter schemas are compiled in. Nothing is
// ever fetched from it: a $ref outside a schema's own document fails.
const paramBase = "https://nexus-harness.invalid/tool-params/"

type compiledParams struct {
	sch *jsonschema.Schema
	doc map[string]any // the schema as plain JSON, for coercion and messages
	err error
}

type paramCache struct {
	mu   sync.Mutex
	fsys fstest.MapFS // name → schema document, written only under mu
	set  *schema.Set
	byID map[string]*compiledParams
}

var params = &paramCache{fsys: fstest.MapFS{}, byID: map[string]*compiledParams{}}

// lockedFS lets the schema set read the map while new schemas are added
// under the cache lock (the set only reads during Compile, which runs
// under that same lock).
type lockedFS struct{ c *paramCache }

func (l lockedFS) Open(name string) (fs.File, error) { return l.c.fsys.Open(name) }

func (c *paramCache) get(raw json.RawMessage) *compiledParams {
	sum := sha256.Sum256(raw)
	id := hex.EncodeToString(sum[:12]) + ".json"
	c.mu.Lock()
	defer c.mu.Unlock()
	if cp, ok := c.byID[id]; ok {
		return cp
	}
	if c.set == nil {
		c.set = schema.NewSet(paramBase, lockedFS{c})
	}
	cp := &compiledParams{}
	if err := json.Unmarshal(raw, &cp.doc); err != nil {
		cp.err = fmt.Errorf("parameter schema is not a JSON object: %w", err)
	} else {
		c.fsys[id] = &fstest.MapFile{Data: append([]byte(nil), raw...)}
		cp.sch, cp.err = c.set.Compile(id)
	}
	c.byID[id] = cp
	return cp
}

// checkArgs prepares, coerces and validates args for t. It returns the
// arguments the tool must run with, or a *tools.Error naming every bad
// parameter and why.
func checkArgs(t *tools.Tool, args map[string]any) (map[string]any, error) {
	args = cloneObject(args)
	if t.Prepare != nil {
		t.Prepare(args)
	}
	if len(t.Params) == 0 {
		return args, nil
	}
	cp := params.get(t.Params)
	if cp.err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.Name, cp.err)
	}
	if err := checkUnknown(cp.doc, args); err != nil {
		return nil, err
	}
	args, _ = coerce(cp.doc, args).(map[string]any)
	if err := checkLimits(t, cp.doc, args); err != nil {
		return nil, err
	}
	err := cp.sch.Validate(args)
	if err == nil {
		return args, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, fmt.Errorf("tool %s: validate parameters: %w", t.Name, err)
	}
	return nil, &tools.Error{Message: describe(ve, cp.doc, t.ParamErrors)}
}

// cloneObject copies the argument tree so that coercion and Prepare never
// change the caller's map.
func cloneObject(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneObject(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case nil, string, bool, float64, json.Number:
		return v
	}
	// A Go caller may pass []string, int, a struct...: the validator only
	// knows JSON-shaped values, so anything else goes through JSON once.
	b, err := json.Marshal(v)
	if err != nil {
		return v // left for validation to report
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// coerce repairs the shapes some MCP hosts send: numbers as strings ("3"),
// booleans as strings, and arrays or objects serialised into a string. It
// follows "properties" and "items" of the schema and changes a value only
// where the schema wants another type and the text converts cleanly;
// everything else is left for validation to report.
func coerce(sch map[string]any, v any) any {
	if sch == nil {
		return v
	}
	types := schemaTypes(sch)
	switch x := v.(type) {
	case json.Number:
		return exactNumber(x, types["integer"])
	case string:
		if types["string"] || len(types) == 0 {
			return v
		}
		s := strings.TrimSpace(x)
		if types["integer"] || types["number"] {
			if _, ok := parseDecimal(s); ok {
				return exactNumber(json.Number(s), types["integer"])
			}
		}
		if types["boolean"] && (s == "true" || s == "false") {
			return s == "true"
		}
		if (types["array"] && strings.HasPrefix(s, "[")) || (types["object"] && strings.HasPrefix(s, "{")) {
			dec := json.NewDecoder(strings.NewReader(s))
			dec.UseNumber()
			var decoded any
			if jsonscan.CheckDepth([]byte(s), jsonscan.MaxDepth) == nil && dec.Decode(&decoded) == nil && !dec.More() {
				return coerce(sch, decoded)
			}
		}
	case map[string]any:
		props, _ := sch["properties"].(map[string]any)
		extra, _ := sch["additionalProperties"].(map[string]any)
		for k, e := range x {
			if ps, ok := props[k].(map[string]any); ok {
				x[k] = coerce(ps, e)
			} else if extra != nil {
				x[k] = coerce(extra, e)
			}
		}
	case []any:
		if items, ok := sch["items"].(map[string]any); ok {
			for i, e := range x {
				x[i] = coerce(items, e)
			}
		}
	}
	return v
}

// exactNumber settles a number kept as its text (json.Number: the MCP
// server and the conformance runner decode that way) on what the text
// says, never on a float64 it was rounded to. An integer within
// ±MaxSafeInteger becomes its canonical text (1e2 and 100.0 are 100, as
// JSON Schema counts them), which tools and plugins read as an integer.
// For a parameter that is not an integer, any other number becomes the
// nearest float64. What is refused stays as text, for checkLimits to
// report: a non-integer or an unsafe integer where an integer is wanted,
// a number no float64 holds elsewhere.
func exactNumber(n json.Number, integer bool) any {
	d, ok := parseDecimal(string(n))
	if !ok {
		return n
	}
	if d.safe() {
		return json.Number(d.text())
	}
	if integer {
		return n
	}
	if f, ok := d.float(); ok {
		return f
	}
	return n
}

func schemaTypes(sch map[string]any) map[string]bool {
	out := map[string]bool{}
	switch t := sch["type"].(type) {
	case string:
		out[t] = true
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				out[s] = true
			}
		}
	}
	return out
}

// printer renders the schema library's messages; made on first use, not
// in every process that links this package.
var printer = sync.OnceValue(func() *message.Printer { return message.NewPrinter(language.English) })

// describe renders a validation failure as one line per problem, in words
// a model can act on: which parameter, what is wrong, what is expected.
func describe(ve *jsonschema.ValidationError, doc map[string]any, overrides map[string]string) string {
	var msgs []string
	seen := map[string]bool{}
	// A contract wording replaces nothing, it leads: "Unknown action:
	// parameter "action" must be one of ...". A missing parameter keeps its
	// plain message.
	add := func(param, msg string) {
		if o, ok := overrides[param]; ok && param != "" && !strings.HasPrefix(msg, "missing ") {
			msg = o + ": " + msg
		}
		if !seen[msg] {
			seen[msg] = true
			msgs = append(msgs, msg)
		}
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		top := ""
		if len(e.InstanceLocation) > 0 {
			top = e.InstanceLocation[0]
		}
		where := paramPath(e.InstanceLocation)
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				name := m
				if where != "" {
					name = where + "." + m
				}
				p := top
				if p == "" {
					p = m
				}
				add(p, fmt.Sprintf("missing required parameter %q", name))
			}
			return
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				if where == "" {
					add("", fmt.Sprintf("unknown parameter %q (this tool takes: %s)", clip(p), strings.Join(propertyNames(doc), ", ")))
				} else {
					add(top, fmt.Sprintf("parameter %q has an unknown member %q", where, clip(p)))
				}
			}
			return
		case *kind.Type:
			add(top, fmt.Sprintf("parameter %q must be %s, got %s", where, article(strings.Join(k.Want, " or ")), k.Got))
			return
		case *kind.Enum:
			want := make([]string, len(k.Want))
			for i, w := range k.Want {
				b, _ := json.Marshal(w)
				want[i] = string(b)
			}
			got, _ := json.Marshal(k.Got)
			add(top, fmt.Sprintf("parameter %q must be one of %s, got %s", where, strings.Join(want, ", "), clip(string(got))))
			return
		case *kind.Minimum:
			add(top, fmt.Sprintf("parameter %q must be at least %s, got %s", where, k.Want.RatString(), k.Got.RatString()))
			return
		case *kind.MinLength:
			if k.Want == 1 {
				add(top, fmt.Sprintf("parameter %q must not be empty", where))
			} else {
				add(top, fmt.Sprintf("parameter %q must be at least %d characters long, got %d", where, k.Want, k.Got))
			}
			return
		}
		if len(e.Causes) == 0 {
			if where == "" {
				add("", "arguments: "+e.ErrorKind.LocalizedString(printer()))
			} else {
				add(top, fmt.Sprintf("parameter %q: %s", where, e.ErrorKind.LocalizedString(printer())))
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(msgs, "; ")
}

// paramPath renders an instance location as the caller wrote it:
// issues[0], how_summary.architect.
func paramPath(loc []string) string {
	var b strings.Builder
	for i, tok := range loc {
		tok = clip(tok) // a member name is the caller's text
		if _, err := strconv.Atoi(tok); err == nil && i > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func propertyNames(doc map[string]any) []string {
	props, _ := doc["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return []string{"no parameters"}
	}
	return names
}

func article(t string) string {
	switch {
	case t == "":
		return t
	case strings.ContainsAny(t[:1], "aeiou"):
		return "an " + t
	}
	return "a " + t
}
