package codex

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex's config.toml is the user's file: nexus adds, updates and removes
// exactly its own tables in it — [mcp_servers.<name>] (and its .env) for
// the servers it registers, [hooks.state."<key>"] trusted_hash for the
// hooks it wrote when asked to trust them — and leaves every other byte as
// it was: comments, order, blank lines, other tables. go-toml's
// unstable.Parser gives each top-level expression (table header,
// key/value, comment) with its position; edits are splices at line
// boundaries. The result is decoded again (go-toml) and compared with the
// intended change before anything is returned, so an edit that would
// change anything else is refused, never written.
//
// nexus edits only entries written as plain tables. A config that defines
// one of them another way (inline `nexus = {…}`, dotted keys such as
// `mcp_servers.nexus.command = …`, an array of tables) is refused with a
// message saying what to rewrite; nothing is written.

// ConfigFile is Codex's configuration file in a Codex folder.
const ConfigFile = "config.toml"

// MCPServer is an MCP server nexus registers: [mcp_servers.<Name>] with
// command and args, and [mcp_servers.<Name>.env] when Env is set (Codex
// passes a server only the environment variables its env lists).
type MCPServer struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	// EnvVars are the variables Codex passes on from its own environment
	// when they are set (env_vars).
	EnvVars []string
}

// TrustEntry is the trust recorded for one hook: [hooks.state."<Key>"]
// trusted_hash = Hash (in the user's config.toml; Codex ignores hook
// state in a project's).
type TrustEntry struct{ Key, Hash string }

// ConfigEdit says what nexus changes in one config.toml.
type ConfigEdit struct {
	// Servers are written: a table nexus wrote before (or none) gets
	// command, args and the env keys; other keys the user added to it
	// stay. A table of that name running another program is left alone
	// (with a note).
	Servers []MCPServer
	// RemoveServers are removed when they run nexus (IsNexusServer),
	// with everything under them (their env and other sub-tables).
	RemoveServers []string
	// Trust entries get their trusted_hash set; other keys of the table
	// (enabled) stay.
	Trust []TrustEntry
	// RemoveTrust entries lose their trusted_hash when it still equals
	// Hash (nexus's record of what it wrote); the table goes when nothing
	// else is left in it. A key also in Trust is kept.
	RemoveTrust []TrustEntry
}

// ConfigResult is the outcome of EditConfig.
type ConfigResult struct {
	// Data is the new file (the input itself when nothing changed).
	Data    []byte
	Changed bool
	// Notes report entries left alone.
	Notes []string
}

// ConfigError is a config.toml nexus will not edit. Nothing was written.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

func configErrorf(format string, args ...any) error {
	return &ConfigError{Msg: fmt.Sprintf(format, args...)}
}

// maxConfigFile bounds the config.toml nexus reads and rewrites.
const maxConfigFile = 4 << 20

// EditConfig applies e to a config.toml (src; empty for none) and returns
// the new content. A second run with the same edit changes nothing.
func EditConfig(src []byte, e ConfigEdit) (ConfigResult, error) {
	res := ConfigResult{Data: src}
	if len(src) > maxConfigFile {
		return res, configErrorf("%s is larger than %d bytes; nexus will not rewrite it", ConfigFile, maxConfigFile)
	}
	before, err := decodeTOML(src)
	if err != nil {
		return res, configErrorf("%s is not valid TOML (%v); nexus will not rewrite it: fix it by hand first", ConfigFile, err)
	}
	doc, err := scanTOML(src)
	if err != nil {
		return res, configErrorf("%s could not be read (%v); nexus will not rewrite it", ConfigFile, err)
	}
	ed := &configEditor{doc: doc, before: before, want: deepCopy(before).(map[string]any)}
	wantServer := map[string]bool{}
	for _, s := range e.Servers {
		wantServer[s.Name] = true
		ed.server(s)
	}
	for _, name := range e.RemoveServers {
		if !wantServer[name] {
			ed.removeServer(name)
		}
	}
	wantTrust := map[string]bool{}
	for _, t := range e.Trust {
		wantTrust[t.Key] = true
		ed.trust(t)
	}
	for _, t := range e.RemoveTrust {
		if !wantTrust[t.Key] {
			ed.untrust(t)
		}
	}
	res.Notes = ed.notes
	if ed.err != nil {
		return res, ed.err
	}
	out := ed.apply()
	if bytes.Equal(out, src) {
		return res, nil
	}
	after, err := decodeTOML(out)
	if err != nil {
		return res, configErrorf("nexus could not edit %s safely (the result would not parse: %v); nothing was written. Check the tables nexus edits (%s) by hand", ConfigFile, err, ed.tables())
	}
	if !reflect.DeepEqual(prune(ed.want), prune(after)) {
		return res, configErrorf("nexus could not edit %s safely (the result would change more than nexus's entries %s); nothing was written", ConfigFile, ed.tables())
	}
	res.Data, res.Changed = out, true
	return res, nil
}

// decodeTOML decodes a document into maps (go-toml checks TOML's rules:
// no key or table defined twice).
func decodeTOML(src []byte) (map[string]any, error) {
	m := map[string]any{}
	if err := toml.Unmarshal(src, &m); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("line %d, column %d: %s", row, col, strings.TrimPrefix(de.Error(), "toml: "))
		}
		return nil, err
	}
	return m, nil
}

// tomlItem is one top-level expression of a document.
type tomlItem struct {
	kind unstable.Kind // Table, ArrayTable, KeyValue or Comment
	// table is the path of the table the item is in (a header's own).
	table []string
	// key is a key/value's key (several parts when dotted).
	key []string
	// value is the kind of a key/value's value.
	value unstable.Kind
	// comment is a comment on the item's own (last) line.
	comment string
	// start is the offset of the item's first line; end the offset after
	// its last line (its newline included).
	start, end int
	// header is the index of the item's table header (-1: the root).
	header int
}

func (it tomlItem) path() []string {
	return append(slices.Clip(it.table), it.key...)
}

type tomlDoc struct {
	src   []byte
	items []tomlItem
	nl    string // the document's line ending
}

// scanTOML lists a document's expressions with their line spans.
func scanTOML(src []byte) (*tomlDoc, error) {
	d := &tomlDoc{src: src, nl: "\n"}
	if i := bytes.IndexByte(src, '\n'); i > 0 && src[i-1] == '\r' {
		d.nl = "\r\n"
	}
	p := unstable.Parser{KeepComments: true}
	p.Reset(src)
	var cur []string
	header := -1
	for p.NextExpression() {
		n := p.Expression()
		it := tomlItem{kind: n.Kind, header: header, table: cur}
		off := 0
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			it.table, off = keyParts(n.Key())
			cur, header = it.table, len(d.items)
			it.header = header
		case unstable.KeyValue:
			it.key, off = keyParts(n.Key())
			it.value = n.Value().Kind
		case unstable.Comment:
			off = int(n.Raw.Offset)
		default:
			return nil, fmt.Errorf("unexpected %s expression", n.Kind)
		}
		if c := n.Next(); c != nil && c.Kind == unstable.Comment {
			it.comment = string(c.Data)
		}
		it.start = lineStart(src, off)
		d.items = append(d.items, it)
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	for i := range d.items {
		next := len(src)
		if i+1 < len(d.items) {
			next = d.items[i+1].start
		}
		d.items[i].end = contentEnd(src, d.items[i].start, next)
	}
	return d, nil
}

// keyParts reads a key's parts (copied: the parser reuses its buffers) and
// the offset of its first part.
func keyParts(it unstable.Iterator) ([]string, int) {
	var parts []string
	off := -1
	for it.Next() {
		k := it.Node()
		if off < 0 {
			off = int(k.Raw.Offset)
		}
		parts = append(parts, string(k.Data))
	}
	return parts, max(off, 0)
}

// lineStart is the offset of the line holding offset off.
func lineStart(src []byte, off int) int {
	return bytes.LastIndexByte(src[:off], '\n') + 1
}

// contentEnd is where an item starting at start ends: after the newline of
// its last non-blank line before next (the next item's line).
func contentEnd(src []byte, start, next int) int {
	seg := src[start:next]
	last := bytes.LastIndexFunc(seg, func(r rune) bool { return !isBlank(r) })
	if last < 0 {
		return start
	}
	if nl := bytes.IndexByte(seg[last:], '\n'); nl >= 0 {
		return start + last + nl + 1
	}
	return next
}

func isBlank(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\n' }

// table returns the header item of the table at path (a [path] header).
func (d *tomlDoc) table(path []string) (int, bool) {
	for i, it := range d.items {
		if it.kind == unstable.Table && slices.Equal(it.table, path) {
			return i, true
		}
	}
	return -1, false
}

// blockEnd is where a table's own lines end: after its last key/value (or
// its header). Comments and blank lines after that belong to what follows.
func (d *tomlDoc) blockEnd(h int) int {
	end := d.items[h].end
	for i := h + 1; i < len(d.items) && d.items[i].header == h; i++ {
		if d.items[i].kind == unstable.KeyValue {
			end = d.items[i].end
		}
	}
	return end
}

// removal widens a span that is removed whole by one blank line before it
// (or, when there is none, one after it), so that removing a block nexus
// inserted gives back the file as it was.
func (d *tomlDoc) removal(start, end int) (int, int) {
	if start > 0 {
		prev := lineStart(d.src, start-1)
		if len(bytes.TrimFunc(d.src[prev:start], isBlank)) == 0 {
			return prev, end
		}
	}
	if end < len(d.src) {
		if nl := bytes.IndexByte(d.src[end:], '\n'); nl >= 0 && len(bytes.TrimFunc(d.src[end:end+nl], isBlank)) == 0 {
			return start, end + nl + 1
		}
	}
	return start, end
}

// line is the 1-based line number of an offset.
func (d *tomlDoc) line(off int) int { return bytes.Count(d.src[:off], []byte{'\n'}) + 1 }

// indent is the leading blanks of an item's line.
func (d *tomlDoc) indent(i int) string {
	s := d.src[d.items[i].start:]
	n := 0
	for n < len(s) && (s[n] == ' ' || s[n] == '\t') {
		n++
	}
	return string(s[:n])
}

type tomlEdit struct {
	start, end int
	text       string
}

type configEditor struct {
	doc    *tomlDoc
	before map[string]any
	// want is the decoded document as it must come out.
	want    map[string]any
	edits   []tomlEdit
	notes   []string
	err     error
	touched [][]string
	// endFixed is set once the file's missing final newline was added.
	endFixed bool
}

func (ed *configEditor) fail(err error) {
	if ed.err == nil {
		ed.err = err
	}
}

func (ed *configEditor) insert(at int, text string) {
	ed.edits = append(ed.edits, tomlEdit{start: at, end: at, text: text})
}

// apply splices the edits into the document, in order of position
// (insertions at one place in the order they were made, before a removal
// starting there).
func (ed *configEditor) apply() []byte {
	src := ed.doc.src
	sort.SliceStable(ed.edits, func(i, j int) bool {
		a, b := ed.edits[i], ed.edits[j]
		if a.start != b.start {
			return a.start < b.start
		}
		return a.start == a.end && b.start != b.end
	})
	var out bytes.Buffer
	pos := 0
	for _, e := range ed.edits {
		if e.start > pos {
			out.Write(src[pos:e.start])
			pos = e.start
		}
		out.WriteString(e.text)
		pos = max(pos, e.end)
	}
	out.Write(src[pos:])
	return out.Bytes()
}

// tables names the tables this edit touches, for messages.
func (ed *configEditor) tables() string {
	var names []string
	for _, p := range ed.touched {
		names = append(names, "["+renderKey(p)+"]")
	}
	return strings.Join(names, ", ")
}

// checkForm refuses an entry (path) defined other than by [path] tables:
// a key/value defining it or something in it from outside its tables, a
// value given to one of its parents (an inline table), an array of tables
// on the way.
func (ed *configEditor) checkForm(path []string) bool {
	ed.touched = append(ed.touched, path)
	for _, it := range ed.doc.items {
		form := ""
		switch it.kind {
		case unstable.KeyValue:
			full := it.path()
			switch {
			case hasPrefix(full, path) && !hasPrefix(it.table, path):
				form = "with a dotted key"
				if len(full) == len(path) {
					form = "as an inline value"
				}
			case len(full) < len(path) && hasPrefix(path, full):
				form = "inside an inline value of " + renderKey(full)
			}
		case unstable.ArrayTable:
			if hasPrefix(it.table, path) || hasPrefix(path, it.table) {
				form = "with an array of tables [[" + renderKey(it.table) + "]]"
			}
		}
		if form != "" {
			ed.fail(configErrorf("%s line %d defines %s %s; nexus edits it only as a [%s] table of its own. Rewrite that entry as a [%s] table (or remove it) and run the command again; nothing was written",
				ConfigFile, ed.doc.line(it.start), renderKey(path), form, renderKey(path), renderKey(path)))
			return false
		}
	}
	return true
}

func hasPrefix(p, prefix []string) bool {
	return len(p) >= len(prefix) && slices.Equal(p[:len(prefix)], prefix)
}

// keyValue is one key nexus sets, in the order it writes them.
type keyValue struct {
	key   string
	value any // string or []string
}

// setKeys gives the keys of the table whose header is item h their values:
// a key already right is left untouched, a wrong one rewritten in place
// (its line's comment kept), a missing one added after the table's last
// key.
func (ed *configEditor) setKeys(h int, kvs []keyValue) {
	d := ed.doc
	table := d.items[h].table
	var add strings.Builder
	indent := ""
	first := true
	for i := h + 1; i < len(d.items) && d.items[i].header == h; i++ {
		if d.items[i].kind == unstable.KeyValue && first {
			indent, first = d.indent(i), false
		}
	}
	for _, kv := range kvs {
		text, err := renderValue(kv.value)
		if err != nil {
			ed.fail(err)
			return
		}
		line := renderKey([]string{kv.key}) + " = " + text
		found := false
		for i := h + 1; i < len(d.items) && d.items[i].header == h; i++ {
			it := d.items[i]
			if it.kind != unstable.KeyValue || !slices.Equal(it.key, []string{kv.key}) {
				continue
			}
			found = true
			if cur, ok := lookup(ed.before, append(slices.Clip(table), kv.key)); ok && sameValue(cur, kv.value) {
				break
			}
			repl := d.indent(i) + line
			if it.comment != "" {
				repl += " " + it.comment
			}
			ed.edits = append(ed.edits, tomlEdit{start: it.start, end: it.end, text: repl + d.nl})
			break
		}
		if !found {
			add.WriteString(indent + line + d.nl)
		}
		setPath(ed.want, append(slices.Clip(table), kv.key), tomlValue(kv.value))
	}
	if add.Len() > 0 {
		at := d.blockEnd(h)
		ed.insert(at, ed.endLine(at)+add.String())
	}
}

// newTable renders a table nexus adds: a blank line, the header, the keys.
func (ed *configEditor) newTable(path []string, kvs []keyValue) (string, bool) {
	var b strings.Builder
	b.WriteString(ed.doc.nl + "[" + renderKey(path) + "]" + ed.doc.nl)
	for _, kv := range kvs {
		text, err := renderValue(kv.value)
		if err != nil {
			ed.fail(err)
			return "", false
		}
		b.WriteString(renderKey([]string{kv.key}) + " = " + text + ed.doc.nl)
		setPath(ed.want, append(slices.Clip(path), kv.key), tomlValue(kv.value))
	}
	return b.String(), true
}

// insertTable adds new tables after the last table whose path starts with
// one of the prefixes (tried in order), else at the end of the file.
func (ed *configEditor) insertTable(text string, prefixes ...[]string) {
	d := ed.doc
	at := -1
	for _, prefix := range prefixes {
		for i, it := range d.items {
			if (it.kind == unstable.Table || it.kind == unstable.ArrayTable) && hasPrefix(it.table, prefix) {
				at = d.blockEnd(i)
			}
		}
		if at >= 0 {
			break
		}
	}
	if at < 0 {
		at = len(d.src)
	}
	if at == 0 {
		text = strings.TrimPrefix(text, d.nl) // the file's first line
	}
	ed.insert(at, ed.endLine(at)+text)
}

// endLine is the newline to write before an insertion at the end of a
// file whose last line has none: for the first insertion there only.
func (ed *configEditor) endLine(at int) string {
	src := ed.doc.src
	if at != len(src) || at == 0 || src[at-1] == '\n' || ed.endFixed {
		return ""
	}
	ed.endFixed = true
	return ed.doc.nl
}

// removeTable removes a table's own lines (header, keys, comments among
// them), widened by one blank line.
func (ed *configEditor) removeTable(h int) {
	s, e := ed.doc.removal(ed.doc.items[h].start, ed.doc.blockEnd(h))
	ed.edits = append(ed.edits, tomlEdit{start: s, end: e})
}

// IsNexusServer reports whether an MCP server entry runs nexus's MCP
// server: its command is an executable named nexus (or the given one) and
// its first argument is mcp.
func IsNexusServer(command string, args []string, nexus string) bool {
	base := filepath.Base(command)
	named := command != "" && (command == nexus || base == "nexus" || strings.HasPrefix(base, "nexus."))
	return named && len(args) > 0 && args[0] == "mcp"
}

func serverOf(v any) (string, []string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", nil, false
	}
	cmd, _ := m["command"].(string)
	raw, _ := m["args"].([]any)
	var args []string
	for _, a := range raw {
		s, ok := a.(string)
		if !ok {
			return cmd, nil, true
		}
		args = append(args, s)
	}
	return cmd, args, true
}

func (ed *configEditor) server(s MCPServer) {
	if s.Name == "" || s.Command == "" {
		ed.fail(fmt.Errorf("an MCP server needs a name and a command"))
		return
	}
	path := []string{"mcp_servers", s.Name}
	if cur, ok := lookup(ed.before, path); ok {
		cmd, args, _ := serverOf(cur)
		if !IsNexusServer(cmd, args, s.Command) {
			ed.notes = append(ed.notes, fmt.Sprintf("an MCP server named %q already exists in %s and does not run nexus; nexus left it alone, so its tools are not registered", s.Name, ConfigFile))
			return
		}
	}
	envPath := append(slices.Clip(path), "env")
	if !ed.checkForm(path) || (len(s.Env) > 0 && !ed.checkForm(envPath)) {
		return
	}
	kvs := []keyValue{{"command", s.Command}, {"args", append([]string{}, s.Args...)}}
	if len(s.EnvVars) > 0 {
		kvs = append(kvs, keyValue{"env_vars", append([]string{}, s.EnvVars...)})
	}
	var env []keyValue
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		env = append(env, keyValue{k, s.Env[k]})
	}
	h, exists := ed.doc.table(path)
	if !exists {
		text, ok := ed.newTable(path, kvs)
		if !ok {
			return
		}
		if len(env) > 0 {
			if he, ok := ed.doc.table(envPath); ok {
				ed.setKeys(he, env)
			} else {
				envText, ok := ed.newTable(envPath, env)
				if !ok {
					return
				}
				text += envText
			}
		}
		ed.insertTable(text, []string{"mcp_servers"})
		return
	}
	ed.setKeys(h, kvs)
	if len(env) == 0 {
		return
	}
	if he, ok := ed.doc.table(envPath); ok {
		ed.setKeys(he, env)
		return
	}
	text, ok := ed.newTable(envPath, env)
	if ok {
		ed.insert(ed.doc.blockEnd(h), text)
	}
}

func (ed *configEditor) removeServer(name string) {
	path := []string{"mcp_servers", name}
	cur, ok := lookup(ed.before, path)
	if !ok {
		return
	}
	cmd, args, _ := serverOf(cur)
	if !IsNexusServer(cmd, args, "") {
		if name == "nexus" {
			ed.notes = append(ed.notes, fmt.Sprintf("the MCP server %q in %s was not written by nexus install; left alone", name, ConfigFile))
		}
		return
	}
	if !ed.checkForm(path) {
		return
	}
	var extra []string
	if m, ok := cur.(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k != "command" && k != "args" && k != "env" {
				extra = append(extra, k)
			}
		}
	}
	if len(extra) > 0 {
		ed.notes = append(ed.notes, fmt.Sprintf("[%s] also held %s, which went with it", renderKey(path), strings.Join(extra, ", ")))
	}
	for i, it := range ed.doc.items {
		if it.kind == unstable.Table && hasPrefix(it.table, path) {
			ed.removeTable(i)
		}
	}
	deletePath(ed.want, path)
}

func (ed *configEditor) trust(t TrustEntry) {
	if strings.TrimSpace(t.Key) != t.Key || t.Key == "" || !strings.HasPrefix(t.Hash, "sha256:") {
		ed.fail(fmt.Errorf("a hook trust entry needs a key without surrounding blanks and a sha256: hash (got %q = %q)", t.Key, t.Hash))
		return
	}
	path := []string{"hooks", "state", t.Key}
	if !ed.checkForm(path) {
		return
	}
	kvs := []keyValue{{"trusted_hash", t.Hash}}
	if h, ok := ed.doc.table(path); ok {
		ed.setKeys(h, kvs)
		return
	}
	if text, ok := ed.newTable(path, kvs); ok {
		ed.insertTable(text, []string{"hooks", "state"}, []string{"hooks"})
	}
}

func (ed *configEditor) untrust(t TrustEntry) {
	path := []string{"hooks", "state", t.Key}
	cur, ok := lookup(ed.before, append(slices.Clip(path), "trusted_hash"))
	if !ok || cur != t.Hash {
		return // not there, or no longer what nexus wrote
	}
	if !ed.checkForm(path) {
		return
	}
	h, ok := ed.doc.table(path)
	if !ok {
		return // unreachable: checkForm allows only [path] tables
	}
	hash, others := -1, false
	for i := h + 1; i < len(ed.doc.items) && ed.doc.items[i].header == h; i++ {
		switch it := ed.doc.items[i]; {
		case it.kind != unstable.KeyValue:
		case slices.Equal(it.key, []string{"trusted_hash"}):
			hash = i
		default:
			others = true
		}
	}
	switch {
	case !others:
		ed.removeTable(h)
	case hash >= 0:
		it := ed.doc.items[hash]
		ed.edits = append(ed.edits, tomlEdit{start: it.start, end: it.end})
	}
	deletePath(ed.want, append(slices.Clip(path), "trusted_hash"))
}

// renderKey writes a key path: bare parts where TOML allows, quoted
// otherwise.
func renderKey(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = p
		if !bareKey(p) {
			parts[i] = quoteString(p)
		}
	}
	return strings.Join(parts, ".")
}

func bareKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// quoteString writes a TOML basic string.
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// renderValue writes a string or a list of strings.
func renderValue(v any) (string, error) {
	check := func(s string) error {
		if !utf8.ValidString(s) {
			return configErrorf("%q is not UTF-8 and cannot be written in %s", s, ConfigFile)
		}
		return nil
	}
	switch x := v.(type) {
	case string:
		if err := check(x); err != nil {
			return "", err
		}
		return quoteString(x), nil
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			if err := check(s); err != nil {
				return "", err
			}
			parts[i] = quoteString(s)
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	}
	return "", fmt.Errorf("codex: cannot render %T in TOML", v)
}

// tomlValue is v as go-toml decodes it.
func tomlValue(v any) any {
	if x, ok := v.([]string); ok {
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	}
	return v
}

func sameValue(cur, want any) bool { return reflect.DeepEqual(cur, tomlValue(want)) }

func lookup(m map[string]any, path []string) (any, bool) {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func setPath(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

func deletePath(m map[string]any, path []string) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, path[len(path)-1])
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// prune drops tables left empty (a table that only held nexus's entry
// disappears with it; an empty one the user wrote compares equal to none).
func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			p := prune(e)
			if m, ok := p.(map[string]any); ok && len(m) == 0 {
				continue
			}
			out[k] = p
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = prune(e)
		}
		return out
	}
	return v
}

// ConfigInfo is what nexus reads from a config.toml: for doctor and for
// the installer's choices.
type ConfigInfo struct {
	// Servers are the MCP servers by name.
	Servers map[string]ServerInfo
	// Hooks are the [hooks.state] entries by key.
	Hooks map[string]HookState
	// Projects are the [projects."<path>"] trust levels by path.
	Projects map[string]string
}

// ServerInfo is one [mcp_servers.<name>] entry.
type ServerInfo struct {
	Command string
	Args    []string
	// Env is its env table, EnvVars the variables it names for Codex to
	// pass on from its own environment: besides a few of Codex's own (HOME,
	// LANG, PATH, USER, TMPDIR), all a server gets.
	Env     map[string]string
	EnvVars []string
	// Nexus is true when it runs nexus's MCP server (IsNexusServer).
	Nexus bool
}

// HookState is one [hooks.state."<key>"] entry.
type HookState struct {
	TrustedHash string
	// Enabled is false when the user turned the hook off.
	Enabled bool
}

// InspectConfig reads the entries nexus cares about from a config.toml.
func InspectConfig(src []byte) (ConfigInfo, error) {
	info := ConfigInfo{Servers: map[string]ServerInfo{}, Hooks: map[string]HookState{}, Projects: map[string]string{}}
	if len(src) > maxConfigFile {
		return info, configErrorf("%s is larger than %d bytes", ConfigFile, maxConfigFile)
	}
	m, err := decodeTOML(src)
	if err != nil {
		return info, configErrorf("%s is not valid TOML (%v)", ConfigFile, err)
	}
	servers, _ := m["mcp_servers"].(map[string]any)
	for name, v := range servers {
		cmd, args, ok := serverOf(v)
		if ok {
			si := ServerInfo{Command: cmd, Args: args, Nexus: IsNexusServer(cmd, args, "")}
			if m, _ := v.(map[string]any); m != nil {
				if vars, ok := m["env_vars"].([]any); ok {
					for _, v := range vars {
						if s, isStr := v.(string); isStr {
							si.EnvVars = append(si.EnvVars, s)
						}
					}
				}
				env, _ := m["env"].(map[string]any)
				for k, val := range env {
					if s, isStr := val.(string); isStr {
						if si.Env == nil {
							si.Env = map[string]string{}
						}
						si.Env[k] = s
					}
				}
			}
			info.Servers[name] = si
		}
	}
	states, _ := lookup(m, []string{"hooks", "state"})
	sm, _ := states.(map[string]any)
	for key, v := range sm {
		st, _ := v.(map[string]any)
		hs := HookState{Enabled: true}
		hs.TrustedHash, _ = st["trusted_hash"].(string)
		if b, ok := st["enabled"].(bool); ok {
			hs.Enabled = b
		}
		// Codex trims the keys it reads.
		info.Hooks[strings.TrimSpace(key)] = hs
	}
	projects, _ := m["projects"].(map[string]any)
	for p, v := range projects {
		pm, _ := v.(map[string]any)
		if lvl, ok := pm["trust_level"].(string); ok {
			info.Projects[p] = lvl
		}
	}
	return info, nil
}
