package vocabulary

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/nexus-harness/nexus/internal/yamljson"
	"github.com/nexus-harness/nexus/schema"
)

// Severity of a finding.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one problem found in a distribution.
type Finding struct {
	Severity Severity `json:"severity"`
	// File is relative to the distribution directory, slash-separated.
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	// Path is a JSONPath-style location inside the file ("$" = whole file).
	Path    string `json:"path"`
	Gate    string `json:"gate,omitempty"`
	Message string `json:"message"`
	// Upstream names the known deviation of nexus-core itself this
	// finding is (C8: docs/validate.md), "" for any other: a property of
	// the distribution as published, not a problem of this setup.
	Upstream string `json:"upstream_deviation,omitempty"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s: %s:%d:%d: %s: %s", f.Severity, f.File, f.Line, f.Col, f.Path, f.Message)
}

// VocabularyFile describes one vocabulary source file and how it is checked.
type VocabularyFile struct {
	Name   string // file name under vocabulary/
	Key    string // top-level key holding its entries
	Schema string // schema location (relative to schema.CoreBaseURL)
}

// VocabularyFiles are the seven vocabulary files of a 0.10 distribution, with
// the schemas nexus-core's own validator uses for them (digest §7.1).
var VocabularyFiles = []VocabularyFile{
	{"capabilities.yml", "capabilities", schema.Vocabulary + "#/$defs/capabilityFile"},
	{"categories.yml", "categories", schema.Vocabulary + "#/$defs/categoryFile"},
	{"resume-tiers.yml", "resume_tiers", schema.Vocabulary + "#/$defs/resumeTierFile"},
	{"tags.yml", "tags", schema.Vocabulary + "#/$defs/tagFile"},
	{"invocations.yml", "invocations", schema.Vocabulary + "#/$defs/invocationFile"},
	{"task-exceptions.yml", "task_exceptions", schema.TaskExceptions},
	{"memory_policy.yml", "", schema.MemoryPolicy},
}

// Source is one parsed YAML or JSON source file of the distribution.
type Source struct {
	File string // relative, slash-separated
	Doc  *yamljson.Doc
	Raw  []byte
	// Valid is true when the file parsed and passed its schema (later
	// gates skip invalid files, as nexus-core's validator does).
	Valid bool
}

// PosOf returns the position of the value at a JSON pointer (or of its
// nearest ancestor that has one). JSON sources are decoded without positions
// and get them on first use: most runs never need one.
func (s *Source) PosOf(ptr string) yamljson.Pos {
	if s.Doc.Positions == nil {
		s.Doc.Positions = map[string]yamljson.Pos{}
		if doc, err := yamljson.Decode(s.Raw); err == nil {
			s.Doc.Positions = doc.Positions
		}
	}
	return s.Doc.PosOf(ptr)
}

// Meta is one agents/<dir>/ or skills/<dir>/ directory and its meta.yml.
type Meta struct {
	Kind string // "agents" or "skills"
	Dir  string // directory name
	File string // relative path of meta.yml
	// Src is nil when meta.yml is missing or is not valid YAML.
	Src   *Source
	Agent *Agent // set when Kind is "agents" and Src.Valid
	Skill *Skill // set when Kind is "skills" and Src.Valid
}

// Valid reports whether meta.yml parsed and passed its schema.
func (m *Meta) Valid() bool { return m.Src != nil && m.Src.Valid }

// BodyFile is the relative path of the directory's body.md.
func (m *Meta) BodyFile() string { return m.Kind + "/" + m.Dir + "/body.md" }

// Distribution is a distribution read from its source files.
type Distribution struct {
	Dist       Dist
	Manifest   *Manifest // nil when manifest.json is missing or fails its schema
	Vocabulary VocabularySet
	Agents     []Agent // from valid agents/*/meta.yml, sorted by directory name
	Skills     []Skill // from valid skills/*/meta.yml, sorted by directory name
	// Metas lists every directory under agents/ and skills/ (valid or not),
	// agents first, each kind sorted by directory name.
	Metas []*Meta
	// Sources holds every parsed file by relative path.
	Sources map[string]*Source

	files map[string][]byte // every file read, by relative path
}

// ReadFile returns the contents of a file of the distribution (relative,
// slash-separated path), reading it at most once.
func (d *Distribution) ReadFile(rel string) ([]byte, error) {
	if b, ok := d.files[rel]; ok {
		return b, nil
	}
	b, err := fs.ReadFile(d.Dist.FS, rel)
	if err != nil {
		return nil, err
	}
	d.files[rel] = b
	return b, nil
}

// FilesRead is the number of distinct files read so far.
func (d *Distribution) FilesRead() int { return len(d.files) }

// ValidSource returns the parsed source at rel when it passed its schema.
func (d *Distribution) ValidSource(rel string) (*Source, bool) {
	s, ok := d.Sources[rel]
	return s, ok && s.Valid
}

// Load reads every vocabulary file, meta file and the manifest of the
// distribution at dir, validating each against its schema (gate G1). It
// never stops at the first problem: the findings list everything wrong with
// what it could read. A nil Distribution means dir itself is unusable.
//
// A directory under agents/ or skills/ without meta.yml yields no finding
// here; the directory gate (G9, see Validate) reports it.
func Load(dir string, schemas *schema.Set) (*Distribution, []Finding) {
	return LoadDist(DirDist(dir, ""), schemas)
}

// LoadDist is Load for any distribution.
func LoadDist(dist Dist, schemas *schema.Set) (*Distribution, []Finding) {
	l := &loader{schemas: schemas, d: newDistribution(dist)}
	if st, err := fs.Stat(dist.FS, "."); err != nil || !st.IsDir() {
		l.errorf("", "$", "G0", "nexus-core distribution directory %s does not exist or is not a directory", dist.Where())
		return nil, l.findings
	}
	l.load()
	return l.d, l.findings
}

func newDistribution(dist Dist) *Distribution {
	return &Distribution{Dist: dist, Sources: map[string]*Source{}, files: map[string][]byte{}}
}

func (l *loader) load() {
	l.loadVocabulary()
	l.loadMetas("agents", schema.Agent)
	l.loadMetas("skills", schema.Skill)
	l.loadManifest()
}

type loader struct {
	schemas  *schema.Set
	d        *Distribution
	findings []Finding
}

func (l *loader) errorf(file, path, gate, format string, args ...any) {
	l.findings = append(l.findings, Finding{Severity: SeverityError, File: file, Line: 1, Col: 1, Path: path, Gate: gate, Message: fmt.Sprintf(format, args...)})
}

// parseYAML reads and decodes one file, recording syntax errors.
func (l *loader) parseYAML(rel string) *Source {
	raw, err := l.d.ReadFile(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.errorf(rel, "$", "G1", "file is missing")
		} else {
			l.errorf(rel, "$", "G1", "cannot read: %v", err)
		}
		return nil
	}
	doc, err := yamljson.Decode(raw)
	if err != nil {
		f := Finding{Severity: SeverityError, File: rel, Line: 1, Col: 1, Path: "$", Gate: "G1", Message: "invalid YAML: " + err.Error()}
		var se *yamljson.SyntaxError
		if errors.As(err, &se) {
			f.Line, f.Col, f.Message = se.Pos.Line, se.Pos.Col, "invalid YAML: "+se.Msg
		}
		l.findings = append(l.findings, f)
		return nil
	}
	src := &Source{File: rel, Doc: doc, Raw: raw}
	l.d.Sources[rel] = src
	return src
}

// check validates a parsed source against loc and records findings.
func (l *loader) check(src *Source, loc string) bool {
	problems, err := l.schemas.Validate(loc, src.Doc.Value)
	if err != nil {
		l.errorf(src.File, "$", "G1", "cannot compile schema %s: %v", loc, err)
		return false
	}
	for _, p := range problems {
		l.findings = append(l.findings, schemaFinding(src, "", p, "G1"))
	}
	src.Valid = len(problems) == 0
	return src.Valid
}

// schemaFinding positions a schema problem found in the value at base
// inside src.
func schemaFinding(src *Source, base string, p schema.Problem, gate string) Finding {
	ptr := base + p.Pointer
	path := ptr
	msg := withValue(p.Message, src.Doc.Value, ptr)
	if names := extraProperties(p.Message); len(names) > 0 {
		// Point at the (first) unknown key rather than its object.
		ptr += "/" + escapeToken(names[0])
		if len(names) == 1 {
			path = ptr
		}
	}
	pos := src.PosOf(ptr)
	return Finding{Severity: SeverityError, File: src.File, Line: pos.Line, Col: pos.Col, Path: PointerToPath(path), Gate: gate, Message: msg}
}

var (
	extraPropsMsg = lazyRegexp(`^additional properties ((?:'[^']*'(?:, )?)+) not allowed$`)
	quoted        = lazyRegexp(`'([^']*)'`)
)

// lazyRegexp compiles expr on first use: hooks import this package for
// LoadManifest and should not pay for the validator's expressions.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// extraProperties returns the names in an "additional properties 'a', 'b'
// not allowed" problem.
func extraProperties(msg string) []string {
	m := extraPropsMsg().FindStringSubmatch(msg)
	if m == nil {
		return nil
	}
	var names []string
	for _, q := range quoted().FindAllStringSubmatch(m[1], -1) {
		names = append(names, q[1])
	}
	return names
}

// withValue adds the offending value to enum and const complaints, which
// the schema library words without it ("value must be one of 'how', ...").
func withValue(msg string, doc any, ptr string) string {
	if !strings.HasPrefix(msg, "value must be") {
		return msg
	}
	switch v := pointerValue(doc, ptr).(type) {
	case string, bool, int64, float64:
		return msg + ", found " + brief(v)
	}
	return msg
}

func (l *loader) loadVocabulary() {
	v := &l.d.Vocabulary
	for _, vf := range VocabularyFiles {
		src := l.parseYAML("vocabulary/" + vf.Name)
		if src == nil || !l.check(src, vf.Schema) {
			continue
		}
		var err error
		switch vf.Name {
		case "capabilities.yml":
			err = decodeKey(src.Doc.Value, vf.Key, &v.Capabilities)
		case "categories.yml":
			err = decodeKey(src.Doc.Value, vf.Key, &v.Categories)
		case "resume-tiers.yml":
			err = decodeKey(src.Doc.Value, vf.Key, &v.ResumeTiers)
		case "tags.yml":
			err = decodeKey(src.Doc.Value, vf.Key, &v.Tags)
		case "invocations.yml":
			err = decodeKey(src.Doc.Value, vf.Key, &v.Invocations)
		case "task-exceptions.yml":
			err = decodeKey(src.Doc.Value, vf.Key, &v.TaskExceptions)
		case "memory_policy.yml":
			err = decodeInto(src.Doc.Value, &v.MemoryPolicy)
		}
		if err != nil {
			l.errorf(src.File, "$", "G1", "cannot decode: %v", err)
			src.Valid = false
		}
	}
}

// loadMetas reads <kind>/*/meta.yml for every directory under kind.
func (l *loader) loadMetas(kind, loc string) {
	entries, err := fs.ReadDir(l.d.Dist.FS, kind)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.errorf(kind+"/", "$", "G9", "directory %s/ is missing", kind)
		} else {
			l.errorf(kind+"/", "$", "G9", "cannot read directory: %v", err)
		}
		return
	}
	// fs.ReadDir sorts by name.
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		m := &Meta{Kind: kind, Dir: e.Name(), File: kind + "/" + e.Name() + "/meta.yml"}
		l.d.Metas = append(l.d.Metas, m)
		if _, err := fs.Stat(l.d.Dist.FS, m.File); err != nil && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		m.Src = l.parseYAML(m.File)
		if m.Src == nil || !l.check(m.Src, loc) {
			continue
		}
		var err error
		if kind == "agents" {
			var a Agent
			if err = decodeInto(m.Src.Doc.Value, &a); err == nil {
				l.d.Agents = append(l.d.Agents, a)
				m.Agent = &l.d.Agents[len(l.d.Agents)-1]
			}
		} else {
			var s Skill
			if err = decodeInto(m.Src.Doc.Value, &s); err == nil {
				l.d.Skills = append(l.d.Skills, s)
				m.Skill = &l.d.Skills[len(l.d.Skills)-1]
			}
		}
		if err != nil {
			l.errorf(m.File, "$", "G1", "cannot decode: %v", err)
			m.Src.Valid = false
		}
	}
}

func (l *loader) loadManifest() {
	const rel = "manifest.json"
	raw, err := l.d.ReadFile(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.findings = append(l.findings, Finding{Severity: SeverityError, File: rel, Line: 1, Col: 1, Path: "$", Gate: "version",
				Message: missingManifest(l.d.Dist).Error()})
		} else {
			l.errorf(rel, "$", "G1", "cannot read: %v", err)
		}
		return
	}
	doc, f := decodeJSON(rel, raw)
	if f != nil {
		f.Gate = "G1"
		l.findings = append(l.findings, *f)
		return
	}
	src := &Source{File: rel, Doc: doc, Raw: raw}
	l.d.Sources[rel] = src
	// The typed decode fails on a field of the wrong type, which the
	// schema words better: decode what can be decoded, validate, and
	// report a decode error only when the schema found nothing.
	var m Manifest
	decodeErr := json.Unmarshal(raw, &m)
	// A missing version is G1's to report (the schema requires it).
	if err := CheckVersion(l.d.Dist, &m); m.NexusCoreVersion != "" && err != nil {
		pos := src.PosOf("/nexus_core_version")
		l.findings = append(l.findings, Finding{Severity: SeverityError, File: rel, Line: pos.Line, Col: pos.Col,
			Path: "$.nexus_core_version", Gate: "version", Message: err.Error()})
	}
	if !l.check(src, schema.Manifest) {
		return
	}
	if decodeErr != nil {
		l.errorf(rel, "$", "G1", "cannot decode: %v", decodeErr)
		src.Valid = false
		return
	}
	l.d.Manifest = &m
}

// decodeJSON parses a JSON file into a JSON-shaped value whose positions
// are computed on demand (Source.PosOf): encoding/json is several times
// faster than going through YAML, and only findings need positions.
func decodeJSON(rel string, raw []byte) (*yamljson.Doc, *Finding) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		f := &Finding{Severity: SeverityError, File: rel, Line: 1, Col: 1, Path: "$", Message: "invalid JSON: " + err.Error()}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset counts the bytes read, including the offending one.
			f.Line, f.Col = lineCol(raw, int(se.Offset)-1)
		}
		return nil, f
	}
	return &yamljson.Doc{Value: jsonShaped(v)}, nil
}

// jsonShaped turns encoding/json's float64 numbers into the int64 values
// yamljson produces for integers, so both decoders yield the same shapes.
func jsonShaped(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonShaped(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonShaped(e)
		}
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	}
	return v
}

// lineCol converts a byte offset into a 1-based line and a 1-based column
// counted in characters (as yaml.v3 counts them).
func lineCol(raw []byte, off int) (int, int) {
	off = min(max(off, 0), len(raw))
	line := 1 + bytes.Count(raw[:off], []byte{'\n'})
	start := bytes.LastIndexByte(raw[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(raw[start:off])
}

func decodeKey(v any, key string, out any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("top level is not a mapping")
	}
	return decodeInto(m[key], out)
}

// decodeInto converts a JSON-shaped value into a typed struct.
func decodeInto(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// PointerToPath turns a JSON pointer into JSONPath-style text:
// "/tags/0/id" → "$.tags[0].id".
func PointerToPath(ptr string) string {
	if ptr == "" {
		return "$"
	}
	var b strings.Builder
	b.WriteByte('$')
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
		} else if isIdent(tok) {
			b.WriteString("." + tok)
		} else {
			b.WriteString("[" + strconv.Quote(tok) + "]")
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}
