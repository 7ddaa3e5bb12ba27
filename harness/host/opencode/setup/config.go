package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/nexus-harness/nexus/harness/host/opencode"
)

// OpenCode reads opencode.json and opencode.jsonc with the same lenient
// parser (comments and trailing commas allowed) and merges them, a later
// file's keys over an earlier one's. nexus owns two entries there, exactly
// mcp.nexus and mcp.nauro; the plugin needs none (OpenCode loads every
// file of a config folder's plugins/). EditConfig changes those two
// entries and no other byte: comments, order, indentation and the user's
// other keys stay as they are. It parses with github.com/tailscale/hujson,
// whose syntax tree keeps every byte of whitespace and comments, and
// places what it adds in the file's own indentation.

// ConfigFiles are the file names OpenCode reads in a project (and in its
// user config folder, after config.json), in the order it merges them.
var ConfigFiles = []string{"opencode.json", "opencode.jsonc"}

// ConfigFile picks the file nexus edits in dir: the one that already holds
// nexus's entries, else opencode.jsonc when it exists alone, else
// opencode.json (created when neither exists). exists reports whether a
// file exists; holds whether it has an mcp.nexus entry.
func ConfigFile(dir string, exists, holds func(path string) bool) string {
	var found []string
	for _, name := range ConfigFiles {
		p := filepath.Join(dir, name)
		if exists(p) {
			found = append(found, p)
		}
	}
	for _, p := range found {
		if holds(p) {
			return p
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return filepath.Join(dir, ConfigFiles[0])
}

// MaxConfigBytes bounds the opencode.json nexus edits.
const MaxConfigBytes = 1 << 20

// maxConfigDepth bounds its nesting (checked before parsing: the parser
// recurses).
const maxConfigDepth = 64

// MCPServer is a local MCP server entry: {type: "local", command,
// environment}.
type MCPServer struct {
	Command     []string
	Environment map[string]string
}

// mcpEntry is the JSON nexus writes, in this member order.
type mcpEntry struct {
	Type        string            `json:"type"`
	Command     []string          `json:"command"`
	Environment map[string]string `json:"environment,omitempty"`
}

// ConfigEdit is what nexus wants in opencode.json.
type ConfigEdit struct {
	// Nexus and Nauro are the entries mcp.nexus and mcp.nauro; nil removes
	// nexus's entry of that name.
	Nexus, Nauro *MCPServer
	// Executable is the nexus this install runs: an entry whose command
	// runs it (or any executable named nexus) with the argument mcp is
	// nexus's own. An entry of that name that is not nexus's is left
	// alone, with a note.
	Executable string
}

// ConfigResult is the outcome of an edit.
type ConfigResult struct {
	// Content is the new file (the input when nothing changed).
	Content []byte
	Changed bool
	// Empty is set when the file holds an empty object afterwards: the
	// installer may remove a file it created.
	Empty bool
	// Notes report entries left alone.
	Notes []string
}

// ConfigError is an opencode.json nexus cannot edit safely; nothing was
// changed.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

func configErrorf(format string, args ...any) error {
	return &ConfigError{Msg: fmt.Sprintf(format, args...)}
}

var bom = []byte("\xef\xbb\xbf")

// EditConfig applies e to an opencode.json (src nil or blank: none yet).
// A second run with the same edit changes no byte; removing what an
// install added gives back the bytes it started from.
func EditConfig(src []byte, e ConfigEdit) (ConfigResult, error) {
	if len(src) > MaxConfigBytes {
		return ConfigResult{}, configErrorf("opencode.json is over %d KiB; nexus edits at most that: add its MCP servers by hand", MaxConfigBytes>>10)
	}
	lead := []byte(nil)
	body := src
	if bytes.HasPrefix(body, bom) {
		lead, body = bom, body[len(bom):]
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if e.Nexus == nil && e.Nauro == nil {
			return ConfigResult{Content: src}, nil
		}
		body = []byte("{}\n")
	}
	if d := jsoncDepth(body); d > maxConfigDepth {
		return ConfigResult{}, configErrorf("opencode.json nests deeper than %d levels; nexus will not edit it", maxConfigDepth)
	}
	root, err := hujson.Parse(body)
	if err != nil {
		return ConfigResult{}, configErrorf("opencode.json cannot be read as JSON with comments (%v); fix it, or add nexus's MCP servers by hand", err)
	}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return ConfigResult{}, configErrorf("opencode.json is not a JSON object; fix it, or add nexus's MCP servers by hand")
	}
	var notes []string
	for _, s := range []struct {
		name string
		want *MCPServer
	}{{opencode.MCPServerName, e.Nexus}, {opencode.NauroServerName, e.Nauro}} {
		n, err := editServer(obj, s.name, s.want, e.Executable)
		if err != nil {
			return ConfigResult{}, err
		}
		notes = append(notes, n...)
	}
	out := append(append([]byte(nil), lead...), root.Pack()...)
	if len(bytes.TrimSpace(src)) == 0 && bytes.Equal(out, append(append([]byte(nil), lead...), "{}\n"...)) {
		out = src
	}
	res := ConfigResult{Content: out, Changed: !bytes.Equal(out, src), Empty: len(obj.Members) == 0, Notes: notes}
	if res.Changed {
		// What OpenCode will read: the edit must parse, and hold exactly
		// the entries asked for.
		if err := checkEdit(out[len(lead):], e); err != nil {
			return ConfigResult{}, configErrorf("nexus's edit of opencode.json did not come out as intended (%v); nothing was written: add its MCP servers by hand", err)
		}
	}
	return res, nil
}

// member finds an object's member by name; dup reports a second one.
func member(obj *hujson.Object, name string) (i int, dup bool) {
	i = -1
	for k := range obj.Members {
		lit, ok := obj.Members[k].Name.Value.(hujson.Literal)
		if ok && lit.String() == name {
			if i >= 0 {
				return i, true
			}
			i = k
		}
	}
	return i, false
}

// editServer writes (want) or removes mcp.<name>.
func editServer(root *hujson.Object, name string, want *MCPServer, exe string) ([]string, error) {
	mi, dup := member(root, "mcp")
	if dup {
		return nil, configErrorf(`opencode.json has two "mcp" members; OpenCode reads the last, nexus will not guess: remove one`)
	}
	if mi < 0 && want == nil {
		return nil, nil
	}
	if mi < 0 {
		insert(root, "mcp", json.RawMessage("{}"), 0, unitOf(root))
		mi = len(root.Members) - 1
	}
	mcpVal := &root.Members[mi].Value
	mcp, ok := mcpVal.Value.(*hujson.Object)
	if !ok {
		return nil, configErrorf(`opencode.json: "mcp" is not an object; fix it, or add nexus's MCP servers by hand`)
	}
	si, dup := member(mcp, name)
	if dup {
		return nil, configErrorf(`opencode.json has two "mcp.%s" members; OpenCode reads the last, nexus will not guess: remove one`, name)
	}
	if si >= 0 && !ownEntry(mcp.Members[si].Value, exe) {
		if want == nil {
			return nil, nil
		}
		return []string{fmt.Sprintf("an MCP server named %q already exists in opencode.json and does not run nexus; nexus left it alone, so its tools are not registered", name)}, nil
	}
	if want == nil {
		if si >= 0 {
			remove(mcp, si)
		}
		if len(mcp.Members) == 0 && !hasComment(mcpVal) {
			remove(root, mi)
		}
		return nil, nil
	}
	entry, err := json.Marshal(mcpEntry{Type: "local", Command: want.Command, Environment: want.Environment})
	if err != nil {
		return nil, err
	}
	if si >= 0 {
		cur := mcp.Members[si].Value.Clone()
		cur.Standardize()
		if sameJSON(cur.Pack(), entry) {
			return nil, nil // as wanted, in whatever layout the file has
		}
		mcp.Members[si].Value.Value = render(entry, indentOf(mcp.Members[si].Name.BeforeExtra), unitOf(root), !multiline(mcp))
		return nil, nil
	}
	insert(mcp, name, entry, depthOf(root, mcpVal), unitOf(root))
	return nil, nil
}

// ownEntry reports whether an mcp entry is nexus's: its command runs this
// nexus (or an executable named nexus) with the argument mcp.
func ownEntry(v hujson.Value, exe string) bool {
	c := v.Clone()
	c.Standardize()
	var e struct {
		Command []string `json:"command"`
	}
	if json.Unmarshal(c.Pack(), &e) != nil || len(e.Command) < 2 || e.Command[1] != "mcp" {
		return false
	}
	base := filepath.Base(e.Command[0])
	return e.Command[0] == exe || base == "nexus" || strings.HasPrefix(base, "nexus.")
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func hasComment(v *hujson.Value) bool {
	o, ok := v.Value.(*hujson.Object)
	return ok && bytes.Contains(o.AfterExtra, []byte("/"))
}

// multiline reports whether an object is laid out one member a line.
func multiline(o *hujson.Object) bool {
	if bytes.ContainsRune(o.AfterExtra, '\n') {
		return true
	}
	for _, m := range o.Members {
		if bytes.ContainsRune(m.Name.BeforeExtra, '\n') {
			return true
		}
	}
	return false
}

// indentOf is the indentation of the last line of an extra.
func indentOf(extra []byte) string {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return ""
	}
	ind := extra[i+1:]
	if len(bytes.Trim(ind, " \t")) != 0 {
		return ""
	}
	return string(ind)
}

// unitOf is the file's indentation step: the indentation of the root
// object's first member on its own line ("  " when there is none).
func unitOf(root *hujson.Object) string {
	for _, m := range root.Members {
		if ind := indentOf(m.Name.BeforeExtra); ind != "" {
			return ind
		}
	}
	return "  "
}

// depthOf is 1 for a value that is a member of the root object.
func depthOf(root *hujson.Object, v *hujson.Value) int {
	for i := range root.Members {
		if &root.Members[i].Value == v {
			return 1
		}
	}
	return 0
}

// render lays a JSON value out for a place indented by indent, in steps
// of unit (compact for a one-line object).
func render(value []byte, indent, unit string, compact bool) hujson.ValueTrimmed {
	var buf bytes.Buffer
	if compact {
		buf.Write(value)
	} else if err := json.Indent(&buf, value, indent, unit); err != nil {
		buf.Reset()
		buf.Write(value)
	}
	v, err := hujson.Parse(buf.Bytes())
	if err != nil {
		panic(fmt.Sprintf("opencode config: a value nexus rendered does not parse: %v", err))
	}
	inlineLists(&v)
	return v.Value
}

// inlineLists puts arrays of plain values on one line ("command": ["a",
// "b"]), as OpenCode's documentation writes them.
func inlineLists(v *hujson.Value) {
	switch t := v.Value.(type) {
	case *hujson.Object:
		for i := range t.Members {
			inlineLists(&t.Members[i].Value)
		}
	case *hujson.Array:
		for _, e := range t.Elements {
			if _, ok := e.Value.(hujson.Literal); !ok {
				for i := range t.Elements {
					inlineLists(&t.Elements[i])
				}
				return
			}
		}
		for i := range t.Elements {
			t.Elements[i].BeforeExtra = nil
			if i > 0 {
				t.Elements[i].BeforeExtra = hujson.Extra(" ")
			}
			t.Elements[i].AfterExtra = nil
		}
		t.AfterExtra = nil
	}
}

// insert appends a member to an object at the given depth below the root
// (0: the root), in the object's layout (indented by unit a level).
// Whatever followed the last member up to the closing brace (a comment on
// its line, say) stays before the new member, so removing it gives the
// same bytes back.
func insert(o *hujson.Object, name string, value []byte, depth int, unit string) {
	nameLit := hujson.String(name)
	if !multiline(o) && len(o.Members) > 0 {
		o.Members = append(o.Members, hujson.ObjectMember{
			Name:  hujson.Value{BeforeExtra: hujson.Extra(" "), Value: nameLit},
			Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: render(value, "", "", true)},
		})
		return
	}
	outer := strings.Repeat(unit, depth)
	inner := outer + unit
	if len(o.Members) > 0 {
		inner = indentOf(o.Members[len(o.Members)-1].Name.BeforeExtra)
	}
	head, tail := o.AfterExtra, []byte(outer)
	if i := bytes.LastIndexByte(o.AfterExtra, '\n'); i >= 0 {
		head, tail = o.AfterExtra[:i], o.AfterExtra[i+1:]
	}
	trailing := len(o.Members) > 0 && o.Members[len(o.Members)-1].Value.AfterExtra != nil
	m := hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: hujson.Extra(string(head) + "\n" + inner), Value: nameLit},
		Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: render(value, inner, unit, false)},
	}
	if trailing {
		m.Value.AfterExtra = hujson.Extra{}
	}
	o.Members = append(o.Members, m)
	o.AfterExtra = hujson.Extra("\n" + string(tail))
}

// remove deletes member i, keeping the comments before it: they go to the
// next member, or back before the closing brace. A comment on the removed
// member's own line after it goes with it.
func remove(o *hujson.Object, i int) {
	gone := o.Members[i]
	o.Members = append(o.Members[:i], o.Members[i+1:]...)
	head := gone.Name.BeforeExtra
	if j := bytes.LastIndexByte(head, '\n'); j >= 0 {
		head = head[:j]
	}
	if i < len(o.Members) {
		next := &o.Members[i].Name
		rest := next.BeforeExtra
		if j := bytes.IndexByte(rest, '\n'); j >= 0 && bytes.Contains(rest[:j], []byte("/")) && bytes.ContainsRune(head, '\n') {
			rest = rest[j:]
		}
		next.BeforeExtra = append(append(hujson.Extra{}, head...), rest...)
		return
	}
	if len(o.Members) > 0 {
		if gone.Value.AfterExtra != nil && o.Members[len(o.Members)-1].Value.AfterExtra == nil {
			o.Members[len(o.Members)-1].Value.AfterExtra = hujson.Extra{}
		}
		if !bytes.ContainsRune(gone.Name.BeforeExtra, '\n') {
			return // a one-line object: nothing moved at insertion
		}
		o.AfterExtra = append(append(hujson.Extra{}, head...), o.AfterExtra...)
		return
	}
	// The object is empty now. An object that was empty on one line
	// ({} or { /* x */ }) gets its line back.
	if !bytes.ContainsRune(head, '\n') && !endsInLineComment(head) {
		o.AfterExtra = append(hujson.Extra{}, head...)
		return
	}
	o.AfterExtra = append(append(hujson.Extra{}, head...), o.AfterExtra...)
}

// endsInLineComment reports whether an extra (whitespace and comments)
// ends inside a // comment, which needs the newline after it.
func endsInLineComment(b []byte) bool {
	for i := 0; i < len(b); {
		switch {
		case bytes.HasPrefix(b[i:], []byte("//")):
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				return true
			}
			i += j + 1
		case bytes.HasPrefix(b[i:], []byte("/*")):
			j := bytes.Index(b[i+2:], []byte("*/"))
			if j < 0 {
				return false
			}
			i += j + 4
		default:
			i++
		}
	}
	return false
}

// jsoncDepth is the deepest nesting of arrays and objects in JSON with
// comments, strings and comments skipped.
func jsoncDepth(b []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '/':
			if i+1 < len(b) && b[i+1] == '/' {
				for i < len(b) && b[i] != '\n' {
					i++
				}
			} else if i+1 < len(b) && b[i+1] == '*' {
				j := bytes.Index(b[i+2:], []byte("*/"))
				if j < 0 {
					return deepest
				}
				i += j + 3
			}
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// checkEdit reads the edited file back as OpenCode would (comments and
// trailing commas dropped) and checks nexus's two entries.
func checkEdit(out []byte, e ConfigEdit) error {
	// Parse a copy: the syntax tree aliases its input, and Standardize
	// blanks comments in place.
	v, err := hujson.Parse(bytes.Clone(out))
	if err != nil {
		return err
	}
	v.Standardize()
	var cfg struct {
		MCP map[string]json.RawMessage `json:"mcp"`
	}
	if err := json.Unmarshal(v.Pack(), &cfg); err != nil {
		return err
	}
	for name, want := range map[string]*MCPServer{opencode.MCPServerName: e.Nexus, opencode.NauroServerName: e.Nauro} {
		got, ok := cfg.MCP[name]
		if want == nil {
			continue // removal leaves another tool's entry alone
		}
		if !ok {
			return fmt.Errorf("mcp.%s is missing", name)
		}
		w, _ := json.Marshal(mcpEntry{Type: "local", Command: want.Command, Environment: want.Environment})
		if !sameJSON(got, w) && ownEntry(mustParse(got), e.Executable) {
			return fmt.Errorf("mcp.%s reads %s", name, got)
		}
	}
	return nil
}

func mustParse(b []byte) hujson.Value {
	v, err := hujson.Parse(bytes.Clone(b))
	if err != nil {
		return hujson.Value{}
	}
	return v
}

// OwnedEntry reports whether opencode.json has an mcp entry of that name
// and whether it is nexus's (see ConfigEdit.Executable): the installer
// asks before it serves the decision store on its own as "nauro".
func OwnedEntry(src []byte, name, exe string) (exists, ours bool, err error) {
	e, err := ReadEntry(src, name, exe)
	if err != nil || e == nil {
		return false, false, err
	}
	return true, e.Ours, nil
}

// Entry is an mcp entry of opencode.json as OpenCode reads it.
type Entry struct {
	MCPServer
	// Type is "local" for a command OpenCode starts; Ours is set when the
	// command runs nexus (see ConfigEdit.Executable).
	Type string
	Ours bool
}

// ReadEntry reads mcp.<name> of an opencode.json (nil when there is none;
// an entry nexus cannot read as a local server has no command).
func ReadEntry(src []byte, name, exe string) (*Entry, error) {
	body := bytes.TrimPrefix(src, bom)
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	if jsoncDepth(body) > maxConfigDepth {
		return nil, errors.New("opencode.json nests too deep")
	}
	v, err := hujson.Parse(bytes.Clone(body))
	if err != nil {
		return nil, err
	}
	root, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, errors.New("opencode.json is not a JSON object")
	}
	mi, _ := member(root, "mcp")
	if mi < 0 {
		return nil, nil
	}
	mcp, ok := root.Members[mi].Value.Value.(*hujson.Object)
	if !ok {
		return nil, nil
	}
	si, _ := member(mcp, name)
	if si < 0 {
		return nil, nil
	}
	val := mcp.Members[si].Value
	e := &Entry{Ours: ownEntry(val, exe)}
	c := val.Clone()
	c.Standardize()
	var m mcpEntry
	if json.Unmarshal(c.Pack(), &m) == nil {
		e.Type, e.Command, e.Environment = m.Type, m.Command, m.Environment
	}
	return e, nil
}
