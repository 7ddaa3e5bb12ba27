package vocabulary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

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

// Distribution is a distribution read from its source files.
type Distribution struct {
	Dir        string
	Manifest   *Manifest // nil when manifest.json is missing or unreadable
	Vocabulary VocabularySet
	Agents     []Agent // from agents/*/meta.yml, sorted by directory name
	Skills     []Skill // from skills/*/meta.yml, sorted by directory name
	// AgentDirs and SkillDirs are the directory names found (valid or not).
	AgentDirs, SkillDirs []string
	// Sources holds every parsed file by relative path.
	Sources map[string]*Source
}

// Load reads every vocabulary file, meta file and the manifest of the
// distribution at dir, validating each against its schema. It never stops
// at the first problem: the findings list everything wrong with what it
// could read. A nil Distribution means dir itself is unusable.
func Load(dir string, schemas *schema.Set) (*Distribution, []Finding) {
	l := &loader{dir: dir, schemas: schemas, d: &Distribution{Dir: dir, Sources: map[string]*Source{}}}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		l.errorf("", "$", "G0", "nexus-core distribution directory %s does not exist or is not a directory", dir)
		return nil, l.findings
	}
	l.loadVocabulary()
	l.d.AgentDirs = l.loadMetas("agents", schema.Agent, func(v any) {
		var a Agent
		if decodeInto(v, &a) == nil {
			l.d.Agents = append(l.d.Agents, a)
		}
	})
	l.d.SkillDirs = l.loadMetas("skills", schema.Skill, func(v any) {
		var s Skill
		if decodeInto(v, &s) == nil {
			l.d.Skills = append(l.d.Skills, s)
		}
	})
	l.loadManifest()
	return l.d, l.findings
}

type loader struct {
	dir      string
	schemas  *schema.Set
	d        *Distribution
	findings []Finding
}

func (l *loader) errorf(file, path, gate, format string, args ...any) {
	l.findings = append(l.findings, Finding{Severity: SeverityError, File: file, Line: 1, Col: 1, Path: path, Gate: gate, Message: fmt.Sprintf(format, args...)})
}

// parseYAML reads and decodes one file, recording syntax errors.
func (l *loader) parseYAML(rel string) *Source {
	raw, err := os.ReadFile(filepath.Join(l.dir, filepath.FromSlash(rel)))
	if err != nil {
		if os.IsNotExist(err) {
			l.errorf(rel, "$", "G1", "file is missing")
		} else {
			l.errorf(rel, "$", "G1", "cannot read: %v", err)
		}
		return nil
	}
	doc, err := yamljson.Decode(raw)
	if err != nil {
		f := Finding{Severity: SeverityError, File: rel, Line: 1, Col: 1, Path: "$", Gate: "G1", Message: "invalid YAML: " + err.Error()}
		if se, ok := err.(*yamljson.SyntaxError); ok {
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
		pos := src.Doc.PosOf(p.Pointer)
		l.findings = append(l.findings, Finding{Severity: SeverityError, File: src.File, Line: pos.Line, Col: pos.Col,
			Path: PointerToPath(p.Pointer), Gate: "G1", Message: p.Message})
	}
	src.Valid = len(problems) == 0
	return src.Valid
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

// loadMetas reads <kind>/*/meta.yml and returns the directory names found.
func (l *loader) loadMetas(kind, loc string, add func(any)) []string {
	entries, err := os.ReadDir(filepath.Join(l.dir, kind))
	if err != nil {
		l.errorf(kind+"/", "$", "G9", "cannot read directory: %v", err)
		return nil
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dirs = append(dirs, e.Name())
		src := l.parseYAML(kind + "/" + e.Name() + "/meta.yml")
		if src != nil && l.check(src, loc) {
			add(src.Doc.Value)
		}
	}
	sort.Strings(dirs)
	return dirs
}

func (l *loader) loadManifest() {
	const rel = "manifest.json"
	raw, err := os.ReadFile(filepath.Join(l.dir, rel))
	if err != nil {
		if os.IsNotExist(err) {
			l.findings = append(l.findings, Finding{Severity: SeverityError, File: rel, Line: 1, Col: 1, Path: "$", Gate: "version",
				Message: missingManifest(l.dir).Error()})
		} else {
			l.errorf(rel, "$", "G1", "cannot read: %v", err)
		}
		return
	}
	// JSON is YAML: decoding through yamljson gives positions for free.
	doc, err := yamljson.Decode(raw)
	if err != nil || !json.Valid(raw) {
		l.errorf(rel, "$", "G1", "invalid JSON")
		return
	}
	src := &Source{File: rel, Doc: doc, Raw: raw}
	l.d.Sources[rel] = src
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&m); err != nil {
		l.errorf(rel, "$", "G1", "cannot decode: %v", err)
		return
	}
	if err := CheckVersion(l.dir, &m); err != nil {
		l.findings = append(l.findings, Finding{Severity: SeverityError, File: rel, Line: doc.PosOf("/nexus_core_version").Line,
			Col: doc.PosOf("/nexus_core_version").Col, Path: "$.nexus_core_version", Gate: "version", Message: err.Error()})
	}
	l.check(src, schema.Manifest)
	l.d.Manifest = &m
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
