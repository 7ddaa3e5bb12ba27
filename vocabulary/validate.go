package vocabulary

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/nexus-harness/nexus/schema"
)

// Report is the outcome of Validate.
type Report struct {
	Dir      string    `json:"dir"`
	Version  string    `json:"nexus_core_version,omitempty"`
	Files    int       `json:"files"`
	Errors   int       `json:"errors"`
	Warnings int       `json:"warnings"`
	Findings []Finding `json:"findings"`
}

// OK reports whether the distribution passed (warnings allowed).
func (r *Report) OK() bool { return r.Errors == 0 }

// WriteText renders one line per finding and a summary line:
//
//	error: vocabulary/tags.yml:8:5: $.tags[0].skill: ... [consumer]
//	1 error, 0 warnings in 48 files
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, f := range r.Findings {
		b.WriteString(f.String())
		if f.Gate != "" {
			b.WriteString(" [" + f.Gate + "]")
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%s, %s in %s\n", plural(r.Errors, "error"), plural(r.Warnings, "warning"), plural(r.Files, "file"))
	_, err := io.WriteString(w, b.String())
	return err
}

// Upstream counts the findings that are known deviations of nexus-core
// itself, and names them (sorted, each once).
func (r *Report) Upstream() (n int, ids []string) {
	seen := map[string]bool{}
	for _, f := range r.Findings {
		if f.Upstream == "" {
			continue
		}
		n++
		if !seen[f.Upstream] {
			seen[f.Upstream] = true
			ids = append(ids, f.Upstream)
		}
	}
	sort.Strings(ids)
	return n, ids
}

// WriteBrief is WriteText without the known upstream deviations (Finding.
// Upstream), which a summary line counts instead: on a distribution as
// nexus-core publishes it, nothing shows that looks like a problem of
// the setup. WriteText (nexus validate -v) lists them.
func (r *Report) WriteBrief(w io.Writer) error {
	var b strings.Builder
	for _, f := range r.Findings {
		if f.Upstream != "" {
			continue
		}
		b.WriteString(f.String())
		if f.Gate != "" {
			b.WriteString(" [" + f.Gate + "]")
		}
		b.WriteByte('\n')
	}
	n, ids := r.Upstream()
	if n > 0 {
		fmt.Fprintf(&b, "note: %s of nexus-core itself tolerated, not problems of this setup (%s; see docs/validate.md; -v lists %s)\n", plural(n, "known upstream deviation"), strings.Join(ids, ", "), them(n))
	}
	fmt.Fprintf(&b, "%s, %s in %s\n", plural(r.Errors, "error"), plural(r.Warnings-n, "warning"), plural(r.Files, "file"))
	_, err := io.WriteString(w, b.String())
	return err
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func (r *Report) add(fs ...Finding) {
	for _, f := range fs {
		if f.Line < 1 {
			f.Line, f.Col = 1, 1
		}
		if f.Col < 1 {
			f.Col = 1
		}
		if f.Path == "" {
			f.Path = "$"
		}
		r.Findings = append(r.Findings, f)
	}
}

func (r *Report) finish() {
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	r.Errors, r.Warnings = 0, 0
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			r.Errors++
		} else {
			r.Warnings++
		}
	}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
}

// Validate checks the distribution at dir the way nexus-core's own validator
// does (gates G1–G11 of the digest, §7.3), plus what a consumer relies on:
// the manifest agrees with the sources, every body_hash recomputes, and every
// conformance fixture is well formed. A distribution outside the supported
// version range is refused with a single finding and nothing else is checked.
//
// schemas must serve nexus-core's schemas from dir (schema.NewCoreSet(dir));
// each schema is compiled once however many files use it.
func Validate(dir string, schemas *schema.Set) *Report {
	return ValidateWith(DirDist(dir, ""), schemas, Options{})
}

// Options carries what the caller knows beyond the distribution.
type Options struct {
	// Host names the capability map Classes comes from, for messages.
	Host string
	// Classes maps each semantic class the host's capability map can block
	// to the tools carrying it. When set, every capability an agent uses is
	// checked to be enforceable (CheckCapabilityMap).
	Classes map[string][]string
	// More are further hosts' maps, checked the same way.
	More []HostClasses
}

// HostClasses are one host's classes (see Options.Classes).
type HostClasses struct {
	Host    string
	Classes map[string][]string
}

// ValidateWith is Validate for any distribution, plus the checks that need
// the caller's knowledge. schemas must serve the schemas of dist
// (schema.NewCoreSetFS(dist.FS)).
func ValidateWith(dist Dist, schemas *schema.Set, o Options) *Report {
	r := &Report{Dir: dist.Where()}
	defer r.finish()
	if st, err := fs.Stat(dist.FS, "."); err != nil || !st.IsDir() {
		r.add(Finding{Severity: SeverityError, File: ".", Path: "$", Gate: "version",
			Message: fmt.Sprintf("nexus-core distribution directory %s does not exist or is not a directory", dist.Where())})
		return r
	}
	d := newDistribution(dist)
	version, gate, stop := versionGate(d)
	r.Version = version
	r.add(gate...)
	if stop {
		r.Files = 1 // the file that decided
		return r
	}
	l := &loader{schemas: schemas, d: d}
	l.load()
	r.add(l.findings...)
	for _, check := range []func(*Distribution) []Finding{
		CheckDirectories,  // G9
		CheckIDMatch,      // G10
		CheckReferences,   // G2–G5
		CheckEntries,      // G5′, G6′
		CheckUniqueIDs,    // ids unique
		CheckTagTriggers,  // G11
		LintHarness,       // G6
		LintModels,        // G7
		CheckPromptOnly,   // G8
		CheckManifest,     // consumer: manifest = sources
		CheckBodyHashes,   // consumer: body_hash recomputes
		CheckTagSkills,    // consumer: tag skills exist
		CheckManifestRefs, // consumer: manifest-only view is closed
	} {
		r.add(check(d)...)
	}
	if o.Classes != nil {
		r.add(CheckCapabilityMap(d, o.Host, o.Classes)...)
	}
	for _, h := range o.More {
		r.add(CheckCapabilityMap(d, h.Host, h.Classes)...)
	}
	r.add(CheckFixtures(d, schemas)...)
	r.Files = d.FilesRead()
	return r
}

// versionGate refuses a distribution outside the supported range before
// anything else is read: a 0.13+ tree would otherwise produce a flood of
// "file is missing" findings that hide the one that matters.
func versionGate(d *Distribution) (version string, findings []Finding, stop bool) {
	raw, err := d.ReadFile("manifest.json")
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return "", nil, false // Load reports the read error
		}
		v := readVersionFile(d.Dist.FS)
		msg := missingManifest(d.Dist).Error()
		if v != "" && supportedVersion().MatchString(v) {
			msg = fmt.Sprintf("manifest.json is missing although VERSION says %s: the distribution is incomplete; reinstall it (npm install @moreih29/nexus-core@%s)", v, v)
		}
		return v, []Finding{{Severity: SeverityError, File: "manifest.json", Path: "$", Gate: "version", Message: msg}}, true
	}
	// Only the two version fields matter here; anything else wrong with
	// the manifest (even its syntax) is G1's to report.
	var m Manifest
	var head struct {
		NexusCoreVersion      string `json:"nexus_core_version"`
		SchemaContractVersion string `json:"schema_contract_version"`
	}
	_ = json.Unmarshal(raw, &head) // fields of the wrong type stay empty
	m.NexusCoreVersion, m.SchemaContractVersion = head.NexusCoreVersion, head.SchemaContractVersion
	pos := func() (int, int) {
		if doc, f := decodeJSON("manifest.json", raw); f == nil {
			p := (&Source{File: "manifest.json", Doc: doc, Raw: raw}).PosOf("/nexus_core_version")
			return p.Line, p.Col
		}
		return 1, 1
	}
	if m.NexusCoreVersion == "" {
		v := readVersionFile(d.Dist.FS)
		if v != "" && !supportedVersion().MatchString(v) {
			return v, []Finding{{Severity: SeverityError, File: "VERSION", Path: "$", Gate: "version",
				Message: (&VersionError{Dir: d.Dist.Where(), Source: d.Dist.Source, Found: v, Problem: "the VERSION file names a version outside the supported range"}).Error()}}, true
		}
		return v, nil, false
	}
	if m.SchemaContractVersion == "" {
		// Let G1 report the missing key; judge the version alone.
		m.SchemaContractVersion = SchemaContractVersion
	}
	if err := CheckVersion(d.Dist, &m); err != nil {
		line, col := pos()
		return m.NexusCoreVersion, []Finding{{Severity: SeverityError, File: "manifest.json", Line: line, Col: col,
			Path: "$.nexus_core_version", Gate: "version", Message: err.Error()}}, true
	}
	if !strings.HasPrefix(m.NexusCoreVersion, "0.10.") {
		line, col := pos()
		findings = append(findings, Finding{Severity: SeverityWarning, File: "manifest.json", Line: line, Col: col, Path: "$.nexus_core_version", Gate: "version",
			Message: fmt.Sprintf("nexus-core %s is accepted: its prompts, vocabulary and schemas equal 0.10's, but nexus implements the 0.10 contracts; its session_end lifecycle fixtures are outside them", m.NexusCoreVersion)})
	}
	return m.NexusCoreVersion, findings, false
}

// at builds a finding positioned at a JSON pointer inside a parsed source.
func at(sev Severity, src *Source, ptr, gate, format string, args ...any) Finding {
	pos := src.PosOf(ptr)
	return Finding{Severity: sev, File: src.File, Line: pos.Line, Col: pos.Col, Path: PointerToPath(ptr), Gate: gate,
		Message: fmt.Sprintf(format, args...)}
}

// entries returns the list under key of a parsed vocabulary document.
func entries(src *Source, key string) []any {
	m, _ := src.Doc.Value.(map[string]any)
	l, _ := m[key].([]any)
	return l
}

func field(v any, key string) any {
	m, _ := v.(map[string]any)
	return m[key]
}

func str(v any, key string) string {
	s, _ := field(v, key).(string)
	return s
}

// idSet collects the ids of a valid vocabulary file's entries; ok is false
// when the file did not pass G1, so the gates that depend on it stay quiet
// instead of reporting every reference as unknown.
func idSet(d *Distribution, file, key string) (map[string]bool, bool) {
	src, ok := d.ValidSource("vocabulary/" + file)
	if !ok {
		return nil, false
	}
	ids := map[string]bool{}
	for _, e := range entries(src, key) {
		ids[str(e, "id")] = true
	}
	return ids, true
}

// CheckReferences runs G2–G5: every agent capability, category and resume
// tier names an entry of its vocabulary file, and every skill trigger names
// a tag of type "skill".
func CheckReferences(d *Distribution) []Finding {
	var out []Finding
	caps, capsOK := idSet(d, "capabilities.yml", "capabilities")
	cats, catsOK := idSet(d, "categories.yml", "categories")
	tiers, tiersOK := idSet(d, "resume-tiers.yml", "resume_tiers")
	skillTags := map[string]bool{}
	tagsSrc, tagsOK := d.ValidSource("vocabulary/tags.yml")
	if tagsOK {
		for _, t := range entries(tagsSrc, "tags") {
			if str(t, "type") == TagSkill {
				skillTags[str(t, "id")] = true
			}
		}
	}
	for _, m := range d.Metas {
		switch {
		case m.Agent != nil:
			a := m.Agent
			for i, c := range a.Capabilities {
				if capsOK && !caps[c] {
					out = append(out, at(SeverityError, m.Src, fmt.Sprintf("/capabilities/%d", i), "G2",
						"capability %q is not defined in vocabulary/capabilities.yml", c))
				}
			}
			if catsOK && !cats[a.Category] {
				out = append(out, at(SeverityError, m.Src, "/category", "G3", "category %q is not defined in vocabulary/categories.yml", a.Category))
			}
			if tiersOK && !tiers[a.ResumeTier] {
				out = append(out, at(SeverityError, m.Src, "/resume_tier", "G4", "resume tier %q is not defined in vocabulary/resume-tiers.yml", a.ResumeTier))
			}
		case m.Skill != nil && tagsOK:
			for i, t := range m.Skill.Triggers {
				if !skillTags[t] {
					out = append(out, at(SeverityError, m.Src, fmt.Sprintf("/triggers/%d", i), "G5",
						"trigger %q is not the id of a tag of type skill in vocabulary/tags.yml", t))
				}
			}
		}
	}
	return out
}

// isSnakeCase matches ^[a-z][a-z0-9_]*$.
func isSnakeCase(s string) bool { return isIdentOf(s, '_') }

// isKebabID matches ^[a-z][a-z0-9-]*$.
func isKebabID(s string) bool { return isIdentOf(s, '-') }

func isIdentOf(s string, sep byte) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == sep) {
			return false
		}
	}
	return true
}

// CheckEntries runs G5′ (capability entries) and G6′ (invocation entries):
// snake_case intents, classes and parameter names, and minimum lengths of
// the trimmed prose (measured as JavaScript does: UTF-16 code units after
// String.prototype.trim, which is stricter than the schema's minLength).
func CheckEntries(d *Distribution) []Finding {
	var out []Finding
	if src, ok := d.ValidSource("vocabulary/capabilities.yml"); ok {
		for i, e := range entries(src, "capabilities") {
			p := fmt.Sprintf("/capabilities/%d", i)
			id := str(e, "id")
			if s := str(e, "intent"); !isSnakeCase(s) {
				out = append(out, at(SeverityError, src, p+"/intent", "G5'", "capability %q: intent %q is not snake_case (^[a-z][a-z0-9_]*$)", id, s))
			}
			classes, _ := field(e, "blocks_semantic_classes").([]any)
			if len(classes) == 0 {
				out = append(out, at(SeverityError, src, p+"/blocks_semantic_classes", "G5'", "capability %q: blocks_semantic_classes must name at least one class", id))
			}
			for j, c := range classes {
				if s, _ := c.(string); !isSnakeCase(s) {
					out = append(out, at(SeverityError, src, fmt.Sprintf("%s/blocks_semantic_classes/%d", p, j), "G5'", "capability %q: class %q is not snake_case", id, s))
				}
			}
			out = append(out, minTrimmed(src, p+"/prose_guidance", "G5'", "capability", id, str(e, "prose_guidance"), 40)...)
		}
	}
	if src, ok := d.ValidSource("vocabulary/invocations.yml"); ok {
		for i, e := range entries(src, "invocations") {
			p := fmt.Sprintf("/invocations/%d", i)
			id := str(e, "id")
			if s := str(e, "intent"); !isSnakeCase(s) {
				out = append(out, at(SeverityError, src, p+"/intent", "G6'", "invocation %q: intent %q is not snake_case (^[a-z][a-z0-9_]*$)", id, s))
			}
			out = append(out, minTrimmed(src, p+"/prose_guidance", "G6'", "invocation", id, str(e, "prose_guidance"), 40)...)
			out = append(out, minTrimmed(src, p+"/fallback_behavior", "G6'", "invocation", id, str(e, "fallback_behavior"), 20)...)
			params, _ := field(e, "semantic_params").([]any)
			for j, sp := range params {
				if s := str(sp, "name"); !isSnakeCase(s) {
					out = append(out, at(SeverityError, src, fmt.Sprintf("%s/semantic_params/%d/name", p, j), "G6'", "invocation %q: parameter name %q is not snake_case", id, s))
				}
			}
		}
	}
	return out
}

func minTrimmed(src *Source, ptr, gate, kind, id, s string, min int) []Finding {
	n := utf16Len(strings.TrimFunc(s, jsTrimSpace))
	if n >= min {
		return nil
	}
	key := ptr[strings.LastIndexByte(ptr, '/')+1:]
	return []Finding{at(SeverityError, src, ptr, gate, "%s %q: %s is %d characters once trimmed, want at least %d", kind, id, key, n, min)}
}

// utf16Len is JavaScript's String length: UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// uniqueLists names, per vocabulary file, the lists whose ids must be
// unique (pointer of the list, key of the id).
var uniqueLists = []struct{ file, list, key, what string }{
	{"capabilities.yml", "/capabilities", "id", "capability id"},
	{"categories.yml", "/categories", "id", "category id"},
	{"resume-tiers.yml", "/resume_tiers", "id", "resume tier id"},
	{"tags.yml", "/tags", "id", "tag id"},
	{"tags.yml", "/tags", "trigger", "tag trigger"},
	{"invocations.yml", "/invocations", "id", "invocation id"},
	{"task-exceptions.yml", "/task_exceptions", "id", "task exception id"},
	{"memory_policy.yml", "/categories", "id", "memory category id"},
	{"memory_policy.yml", "/categories", "prefix", "memory category prefix"},
}

// CheckUniqueIDs reports ids that occur twice in one list: a duplicate makes
// every lookup by id ambiguous. Checked in the vocabulary files, in each
// invocation's parameters and in the manifest's agent and skill lists.
func CheckUniqueIDs(d *Distribution) []Finding {
	var out []Finding
	for _, u := range uniqueLists {
		src, ok := d.ValidSource("vocabulary/" + u.file)
		if !ok {
			continue
		}
		list, _ := pointerValue(src.Doc.Value, u.list).([]any)
		out = append(out, duplicates(src, u.list, list, u.key, u.what)...)
		if u.file == "invocations.yml" && u.key == "id" {
			for i, inv := range list {
				params, _ := field(inv, "semantic_params").([]any)
				out = append(out, duplicates(src, fmt.Sprintf("%s/%d/semantic_params", u.list, i), params, "name", "parameter name of invocation "+strconv.Quote(str(inv, "id")))...)
			}
		}
	}
	if src, ok := d.Sources["manifest.json"]; ok {
		for _, kind := range []string{"agents", "skills"} {
			list, _ := field(src.Doc.Value, kind).([]any)
			out = append(out, duplicates(src, "/"+kind, list, "id", strings.TrimSuffix(kind, "s")+" id")...)
		}
	}
	return out
}

func duplicates(src *Source, listPtr string, list []any, key, what string) []Finding {
	var out []Finding
	first := map[string]int{}
	for i, e := range list {
		v, ok := field(e, key).(string)
		if !ok {
			continue
		}
		if j, seen := first[v]; seen {
			pos := src.PosOf(fmt.Sprintf("%s/%d/%s", listPtr, j, key))
			out = append(out, at(SeverityError, src, fmt.Sprintf("%s/%d/%s", listPtr, i, key), "unique",
				"duplicate %s %q (first at line %d)", what, v, pos.Line))
			continue
		}
		first[v] = i
	}
	return out
}

// pointerValue resolves a JSON pointer of plain keys and indexes.
func pointerValue(v any, ptr string) any {
	if ptr == "" {
		return v
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			var i int
			if _, err := fmt.Sscanf(tok, "%d", &i); err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// CheckTagTriggers runs G11: a tag's trigger is "[" + its id with every "-"
// replaced by ":" + "]" (tag m-gc → "[m:gc]").
func CheckTagTriggers(d *Distribution) []Finding {
	src, ok := d.ValidSource("vocabulary/tags.yml")
	if !ok {
		return nil
	}
	var out []Finding
	for i, t := range entries(src, "tags") {
		id, trig := str(t, "id"), str(t, "trigger")
		if want := "[" + strings.ReplaceAll(id, "-", ":") + "]"; trig != want {
			out = append(out, at(SeverityError, src, fmt.Sprintf("/tags/%d/trigger", i), "G11", "tag %q: trigger is %q, want %q", id, trig, want))
		}
	}
	return out
}

// CheckDirectories runs G9: agents/ and skills/ hold only directories, and
// each holds exactly body.md and meta.yml.
func CheckDirectories(d *Distribution) []Finding {
	var out []Finding
	for _, kind := range []string{"agents", "skills"} {
		entries, err := fs.ReadDir(d.Dist.FS, kind)
		if err != nil {
			continue // Load reported it
		}
		for _, e := range entries {
			rel := kind + "/" + e.Name()
			if !e.IsDir() {
				out = append(out, Finding{Severity: SeverityError, File: rel, Path: "$", Gate: "G9",
					Message: fmt.Sprintf("%s/ may hold only one directory per %s; remove this file", kind, strings.TrimSuffix(kind, "s"))})
				continue
			}
			files, err := fs.ReadDir(d.Dist.FS, rel)
			if err != nil {
				out = append(out, Finding{Severity: SeverityError, File: rel + "/", Path: "$", Gate: "G9", Message: fmt.Sprintf("cannot read directory: %v", err)})
				continue
			}
			have := map[string]bool{}
			for _, f := range files {
				have[f.Name()] = true
				if f.Name() != "body.md" && f.Name() != "meta.yml" {
					out = append(out, Finding{Severity: SeverityError, File: rel + "/" + f.Name(), Path: "$", Gate: "G9",
						Message: fmt.Sprintf("unexpected entry: %s/ may hold only body.md and meta.yml", rel)})
				}
			}
			for _, need := range []string{"body.md", "meta.yml"} {
				if !have[need] {
					out = append(out, Finding{Severity: SeverityError, File: rel + "/" + need, Path: "$", Gate: "G9",
						Message: fmt.Sprintf("file is missing: every %s/ directory holds body.md and meta.yml", kind)})
				}
			}
		}
	}
	return out
}

// CheckIDMatch runs G10: the directory name and meta.yml's id are kebab-case
// (^[a-z][a-z0-9-]*$, stricter than the schema's id) and equal. It runs on
// every meta.yml that parsed, valid or not, as upstream's does.
func CheckIDMatch(d *Distribution) []Finding {
	var out []Finding
	for _, m := range d.Metas {
		if m.Src == nil {
			continue
		}
		if !isKebabID(m.Dir) {
			out = append(out, Finding{Severity: SeverityError, File: m.File, Line: 1, Col: 1, Path: "$", Gate: "G10",
				Message: fmt.Sprintf("directory name %q is not kebab-case (^[a-z][a-z0-9-]*$)", m.Dir)})
		}
		id, ok := field(m.Src.Doc.Value, "id").(string)
		if !ok {
			out = append(out, at(SeverityError, m.Src, "", "G10", "id is missing or not a string"))
			continue
		}
		if !isKebabID(id) {
			out = append(out, at(SeverityError, m.Src, "/id", "G10", "id %q is not kebab-case (^[a-z][a-z0-9-]*$)", id))
		}
		if id != m.Dir {
			out = append(out, at(SeverityError, m.Src, "/id", "G10", "id %q does not match its directory name %q", id, m.Dir))
		}
	}
	return out
}

// CheckPromptOnly runs G8: nexus-core is prompts and data only, so no
// JavaScript or TypeScript file may ship outside node_modules/, .git/,
// dist/, .nexus/ and scripts/.
func CheckPromptOnly(d *Distribution) []Finding {
	var out []Finding
	skip := map[string]bool{"node_modules": true, ".git": true, "dist": true, ".nexus": true, "scripts": true}
	_ = fs.WalkDir(d.Dist.FS, ".", func(rel string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable corners are not this gate's business
		}
		if e.IsDir() {
			if skip[rel] {
				return fs.SkipDir
			}
			return nil
		}
		switch path.Ext(rel) {
		case ".ts", ".tsx", ".js", ".jsx", ".cjs", ".mjs":
			out = append(out, Finding{Severity: SeverityError, File: rel, Path: "$", Gate: "G8",
				Message: "runtime code in a prompt-only package (no .ts/.tsx/.js/.jsx/.cjs/.mjs outside scripts/)"})
		}
		return nil
	})
	return out
}

// CheckCapabilityMap checks that the harness can enforce every capability an
// agent uses: each class the capability blocks should be carried by some
// tool of the host's capability map (classes maps class → tools). A
// capability none of whose classes any tool carries blocks nothing, which is
// an error; a single uncovered class is a warning.
func CheckCapabilityMap(d *Distribution, host string, classes map[string][]string) []Finding {
	src, ok := d.ValidSource("vocabulary/capabilities.yml")
	if !ok {
		return nil
	}
	users := map[string][]string{} // capability → agents using it
	for _, m := range d.Metas {
		if m.Agent != nil {
			for _, c := range m.Agent.Capabilities {
				users[c] = append(users[c], m.Agent.ID)
			}
		}
	}
	if host == "" {
		host = "host"
	}
	var out []Finding
	for i, e := range entries(src, "capabilities") {
		id := str(e, "id")
		if len(users[id]) == 0 {
			continue
		}
		list, _ := field(e, "blocks_semantic_classes").([]any)
		var uncovered []Finding
		for j, c := range list {
			class, _ := c.(string)
			if len(classes[class]) == 0 {
				uncovered = append(uncovered, at(SeverityWarning, src, fmt.Sprintf("/capabilities/%d/blocks_semantic_classes/%d", i, j), "capability-map",
					"no tool of the %s capability map is in class %q, so %s cannot block it", host, class, id))
			}
		}
		if len(list) > 0 && len(uncovered) == len(list) {
			out = append(out, at(SeverityError, src, fmt.Sprintf("/capabilities/%d", i), "capability-map",
				"capability %q (used by %s) blocks no tool of the %s capability map: none of its classes is carried by a tool, so the gate cannot enforce it",
				id, strings.Join(users[id], ", "), host))
			continue
		}
		out = append(out, uncovered...)
	}
	return out
}
