// Package schema compiles JSON Schemas (draft 2020-12, with "format"
// asserted) and turns validation failures into readable "pointer: message"
// problems.
//
// nexus-core's schemas are read from a distribution directory at run time
// through a Loader that maps the distribution's URL space onto files, so only
// the schemas a process actually needs are read and compiled (hooks compile
// one small state schema, not all twenty). The project's own schemas (tool
// parameters, plugin manifests, configuration) are embedded and compiled the
// same way.
package schema

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// CoreBaseURL is the URL space nexus-core's schemas live in: files under
// <dist>/schema/ are <CoreBaseURL>schema/<name>, state schemas are
// <CoreBaseURL>conformance/state-schemas/<name>. The two absolute $ids the
// distribution declares (memory-policy, task-exceptions, memory-access) fall
// exactly on their files under this base, and the relative ones
// ("common.schema.json") resolve against the file's own URL.
const CoreBaseURL = "https://moreih29/nexus-core/"

// Well-known nexus-core schema locations, relative to CoreBaseURL.
const (
	Agent          = "schema/agent.schema.json"
	Skill          = "schema/skill.schema.json"
	Manifest       = "schema/manifest.schema.json"
	Vocabulary     = "schema/vocabulary.schema.json"
	TaskExceptions = "schema/task-exceptions.schema.json"
	MemoryPolicy   = "schema/memory-policy.schema.json"
	Fixture        = "conformance/schema/fixture.schema.json"
	StatePlan      = "conformance/state-schemas/plan.schema.json"
	StateTasks     = "conformance/state-schemas/tasks.schema.json"
	StateHistory   = "conformance/state-schemas/history.schema.json"
	StateTracker   = "conformance/state-schemas/agent-tracker.schema.json"
	StateMemory    = "conformance/state-schemas/memory-access.schema.json"
)

// Set compiles and caches schemas from one URL space backed by a file
// system. It is safe for concurrent use.
type Set struct {
	base string
	fsys fs.FS

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
	itemLocs map[string]itemLocResult // ItemLocation's answers
}

// maxSchemaFile bounds a schema file read from a distribution folder
// (nexus-core's largest is 22 KB), maxSchemaEntries a folder of it.
const (
	maxSchemaFile    = 4 << 20
	maxSchemaEntries = 10000
)

// NewCoreSet serves nexus-core's schemas from the distribution at coreDir,
// each read only when it is a regular file inside coreDir (safefile).
func NewCoreSet(coreDir string) *Set {
	return NewSet(CoreBaseURL, safefile.DirFS(coreDir, safefile.FSLimits{File: maxSchemaFile, Entries: maxSchemaEntries, Depth: 16}))
}

// NewCoreSetFS serves nexus-core's schemas from a distribution's files
// (vocabulary.Dist.FS: a directory or the built-in copy).
func NewCoreSetFS(fsys fs.FS) *Set {
	return NewSet(CoreBaseURL, fsys)
}

// NewSet serves schemas whose URLs start with base from fsys (URL path
// below base = file path in fsys). Any $ref outside base is a compile error:
// nothing is ever fetched from the network or an arbitrary file.
func NewSet(base string, fsys fs.FS) *Set {
	s := &Set{base: base, fsys: fsys, compiled: map[string]*jsonschema.Schema{}}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(loader{s})
	s.compiler = c
	return s
}

type loader struct{ s *Set }

func (l loader) Load(url string) (any, error) {
	rel, ok := strings.CutPrefix(url, l.s.base)
	if !ok {
		return nil, fmt.Errorf("schema %s is outside %s; external references are not fetched", url, l.s.base)
	}
	f, err := l.s.fsys.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("load schema %s: %w", rel, err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("parse schema %s: %w", rel, err)
	}
	return doc, nil
}

// Compile returns the compiled schema at loc: a path relative to the set's
// base (optionally with a "#/$defs/..." fragment) or an absolute URL.
func (s *Set) Compile(loc string) (*jsonschema.Schema, error) {
	url := loc
	if !strings.Contains(loc, "://") {
		url = s.base + loc
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.compiled[url]; ok {
		return sch, nil
	}
	sch, err := s.compiler.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile schema %s: %w", loc, err)
	}
	s.compiled[url] = sch
	return sch, nil
}

// Validate compiles loc (cached) and validates v, a JSON-shaped value
// (map[string]any, []any, string, bool, nil, numbers). It returns the
// problems found, or an error when the schema itself cannot be compiled.
func (s *Set) Validate(loc string, v any) ([]Problem, error) {
	sch, err := s.Compile(loc)
	if err != nil {
		return nil, err
	}
	return Check(sch, v), nil
}

// Problem is one validation failure.
type Problem struct {
	// Pointer is the JSON pointer of the offending value ("" = root).
	Pointer string `json:"pointer"`
	// Message says what is wrong, in words.
	Message string `json:"message"`
	// Kind is the failing keyword ("required", "additionalProperties", …).
	Kind string `json:"kind,omitempty"`
	// Keyword is the schema location that failed (for debugging).
	Keyword string `json:"keyword,omitempty"`
	// Properties, for an additionalProperties problem, are the unknown
	// members (so a caller can point at each one's own position).
	Properties []string `json:"properties,omitempty"`
}

// String renders "pointer: message" (the root is shown as "/").
func (p Problem) String() string {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "/"
	}
	return ptr + ": " + p.Message
}

// Check validates v against a compiled schema and returns its problems.
func Check(sch *jsonschema.Schema, v any) []Problem {
	err := sch.Validate(v)
	if err == nil {
		return nil
	}
	return Problems(err)
}

var printer = message.NewPrinter(language.English)

// Problems flattens a validation error into leaf problems. The library's
// BasicOutput mislabels leaves reached through a cross-file $ref as
// "validation failed", so the cause tree is walked here instead.
func Problems(err error) []Problem {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Message: err.Error()}}
	}
	var out []Problem
	collect(ve, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return dedupe(out)
}

func collect(e *jsonschema.ValidationError, out *[]Problem) {
	switch k := e.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		// A value matching none of the alternatives: when exactly one
		// alternative got past its type check, its complaints are the
		// useful ones; otherwise say that no alternative matched.
		if best := bestBranch(e.Causes); best != nil {
			collect(best, out)
			return
		}
		*out = append(*out, leaf(e, k.LocalizedString(printer)))
		return
	}
	if len(e.Causes) == 0 {
		*out = append(*out, leaf(e, e.ErrorKind.LocalizedString(printer)))
		return
	}
	for _, c := range e.Causes {
		collect(c, out)
	}
}

func bestBranch(causes []*jsonschema.ValidationError) *jsonschema.ValidationError {
	var best *jsonschema.ValidationError
	for _, c := range causes {
		if isTypeMismatch(c) {
			continue
		}
		if best != nil {
			return nil
		}
		best = c
	}
	return best
}

func isTypeMismatch(e *jsonschema.ValidationError) bool {
	for len(e.Causes) == 1 {
		if _, ok := e.ErrorKind.(*kind.Type); ok {
			return true
		}
		e = e.Causes[0]
	}
	_, ok := e.ErrorKind.(*kind.Type)
	return ok && len(e.Causes) == 0
}

func leaf(e *jsonschema.ValidationError, msg string) Problem {
	p := Problem{
		Pointer: pointer(e.InstanceLocation),
		Message: msg,
		Keyword: e.SchemaURL,
	}
	if kp := e.ErrorKind.KeywordPath(); len(kp) > 0 {
		p.Kind = kp[0]
	}
	if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
		p.Properties = ap.Properties
	}
	return p
}

// KindAdditionalProperties is the Kind of an unknown-member problem.
const KindAdditionalProperties = "additionalProperties"

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

func dedupe(ps []Problem) []Problem {
	seen := map[string]bool{}
	out := ps[:0]
	for _, p := range ps {
		k := p.Pointer + "\x00" + p.Message
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, p)
	}
	return out
}

// Join renders problems as "; "-separated "pointer: message" text.
func Join(ps []Problem) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}
