// Package vocabulary loads a nexus-core distribution (vocabulary/*.yml,
// agents/*/meta.yml, skills/*/meta.yml, manifest.json) into typed Go values
// and answers the questions the engine asks of it: which capabilities a
// role has, which tags exist, where a skill's body is.
//
// Two entry points exist because they serve different paths: LoadManifest
// reads the single manifest.json (the generated catalog, enough for hooks
// and tools, well under a millisecond), while Load reads and validates every
// source file (for `nexus validate`).
package vocabulary

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// SupportedRange names the nexus-core versions nexus implements.
const SupportedRange = ">=0.10.0 <0.13.0"

var supportedVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^0\.1[0-2]\.[0-9]+(-[a-z0-9.-]+)?$`) })

// SchemaContractVersion is the manifest schema contract nexus understands.
const SchemaContractVersion = "2.0"

// VersionError reports a distribution nexus does not implement.
type VersionError struct {
	Dir     string // where the distribution is (Dist.Where)
	Source  string // how it was chosen (Dist.Source); "" when unknown
	Found   string // the version found, or "" when none could be read
	Problem string
}

func (e *VersionError) Error() string {
	found := e.Found
	if found == "" {
		found = "unknown"
	}
	return fmt.Sprintf("nexus-core at %s (version %s) is not supported: %s; nexus supports nexus-core %s (0.10.x to 0.12.x); %s",
		e.Dir, found, e.Problem, SupportedRange, backToBuiltin(e.Source))
}

// backToBuiltin says how to drop a setting so nexus uses its built-in
// distribution again.
func backToBuiltin(source string) string {
	builtin := "nexus-core " + BuiltinVersion + " built into nexus"
	switch {
	case source == "--core flag" || source == "--core":
		return "drop --core to use the " + builtin + ", or point it at a supported distribution"
	case source == "NEXUS_CORE_DIR":
		return "unset NEXUS_CORE_DIR to use the " + builtin + ", or point it at a supported distribution"
	case strings.HasPrefix(source, "config core.dir"):
		return "remove core.dir (" + strings.TrimPrefix(source, "config ") + ") to use the " + builtin + ", or point it at a supported distribution"
	case source == "node_modules":
		return "remove " + NodeModulesPath + " (npm uninstall @moreih29/nexus-core) to use the " + builtin + ", or install a supported release (npm install @moreih29/nexus-core@0.10)"
	case source == SourceBuiltin:
		return "this nexus binary is broken; reinstall it"
	}
	return "point --core or NEXUS_CORE_DIR at a supported distribution, or set none of --core, NEXUS_CORE_DIR and core.dir to use the " + builtin
}

// Core is a loaded distribution, as seen through its manifest.
type Core struct {
	// Dist is where the files come from; Dir is Dist.Dir (the folder on
	// disk, "" for the built-in copy).
	Dist Dist
	Dir  string

	version string // from the manifest's head: known without decoding
	path    string
	raw     []byte
	once    sync.Once
	m       *Manifest
	err     error

	agents map[string]*Agent
	skills map[string]*Skill
	caps   map[string]*Capability
}

// LoadManifest reads dir/manifest.json, applies the version gate and decodes
// it. It does not read or validate the YAML sources.
func LoadManifest(dir string) (*Core, error) { return LoadManifestDist(DirDist(dir, "")) }

// LoadManifestDist is LoadManifest for any distribution.
func LoadManifestDist(d Dist) (*Core, error) {
	c, err := OpenManifestDist(d)
	if err != nil {
		return nil, err
	}
	if err := c.decode(); err != nil {
		return nil, err
	}
	return c, nil
}

// OpenManifest reads dir/manifest.json and applies the version gate, but
// decodes the catalog only when it is first asked a question. A hook
// process that never looks at agents, skills or tags (PostToolUse, most of
// the time) then does not pay for decoding 20 KB of JSON into typed values,
// about a millisecond in a fresh process. If the deferred decoding fails,
// the first accessor panics with the error (the hook runner recovers and
// applies its failure policy); callers that cannot tolerate that use
// LoadManifest.
func OpenManifest(dir string) (*Core, error) { return OpenManifestDist(DirDist(dir, "")) }

// OpenManifestDist is OpenManifest for any distribution. For the built-in
// one the manifest's bytes are already in memory (the binary's read-only
// data): nothing is read from disk.
func OpenManifestDist(d Dist) (*Core, error) {
	path := d.File("manifest.json")
	data, err := fs.ReadFile(d.FS, "manifest.json")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, missingManifest(d)
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	// The version gate needs two top-level strings, which come first in
	// every manifest nexus-core generates: read tokens only until both are
	// seen, leaving the rest for the deferred decoding.
	head, err := readHead(data)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if err := CheckVersion(d, head); err != nil {
		return nil, err
	}
	return &Core{Dist: d, Dir: d.Dir, version: head.NexusCoreVersion, path: path, raw: data}, nil
}

// readHead extracts nexus_core_version and schema_contract_version from a
// manifest without decoding the catalog: token by token (jsontext), the
// other members skipped unparsed.
func readHead(data []byte) (*Manifest, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if t, err := dec.ReadToken(); err != nil {
		return nil, err
	} else if t.Kind() != '{' {
		return nil, fmt.Errorf("the top level is not a JSON object")
	}
	m := &Manifest{}
	seen := 0
	for seen < 2 && dec.PeekKind() != '}' {
		t, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := t.String() // t is void after the next read
		var dst *string
		switch name {
		case "nexus_core_version":
			dst = &m.NexusCoreVersion
		case "schema_contract_version":
			dst = &m.SchemaContractVersion
		default:
			if err := dec.SkipValue(); err != nil {
				return nil, fmt.Errorf("member %s: %w", name, err)
			}
			continue
		}
		v, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", name, err)
		}
		if v.Kind() != '"' {
			return nil, fmt.Errorf("member %s: want a string, found %v", name, v.Kind())
		}
		*dst = v.String()
		seen++
	}
	return m, nil
}

func (c *Core) decode() error {
	c.once.Do(func() {
		var m Manifest
		if err := json.Unmarshal(c.raw, &m); err != nil {
			c.err = fmt.Errorf("parse %s: %w", c.path, err)
			return
		}
		c.raw = nil
		c.index(&m)
	})
	return c.err
}

// load decodes on first use; see OpenManifest.
func (c *Core) load() *Manifest {
	if err := c.decode(); err != nil {
		panic(err)
	}
	return c.m
}

// Manifest returns the decoded manifest.json.
func (c *Core) Manifest() *Manifest { return c.load() }

// CheckVersion applies the version gate to a parsed manifest.
func CheckVersion(d Dist, m *Manifest) error {
	verr := func(problem string) error {
		return &VersionError{Dir: d.Where(), Source: d.Source, Found: m.NexusCoreVersion, Problem: problem}
	}
	// The version built in is supported (TestBuiltinVersionSupported): the
	// common case needs no regexp compiled.
	if m.NexusCoreVersion != BuiltinVersion && !supportedVersion().MatchString(m.NexusCoreVersion) {
		return verr("nexus_core_version is outside the supported range")
	}
	if m.SchemaContractVersion != SchemaContractVersion {
		return verr(fmt.Sprintf("schema_contract_version is %q, want %q", m.SchemaContractVersion, SchemaContractVersion))
	}
	if v := readVersionFile(d.FS); v != "" && v != m.NexusCoreVersion {
		return verr(fmt.Sprintf("VERSION says %s but manifest.json says %s (a mixed install?)", v, m.NexusCoreVersion))
	}
	return nil
}

func missingManifest(d Dist) error {
	version := readVersionFile(d.FS)
	if version == "" {
		version = readPackageVersion(d.FS)
	}
	var layout []string
	for _, sub := range []string{"assets", "spec", "harness", "dist"} {
		if st, err := fs.Stat(d.FS, sub); err == nil && st.IsDir() {
			layout = append(layout, sub+"/")
		}
	}
	problem := "it has no manifest.json"
	if len(layout) > 0 {
		problem += fmt.Sprintf(" and has %s: nexus-core 0.13.0 and later are a runtime package with a different state layout and tool set", strings.Join(layout, ", "))
	} else if _, err := fs.Stat(d.FS, "."); err != nil {
		problem = "the directory does not exist"
	}
	return &VersionError{Dir: d.Where(), Source: d.Source, Found: version, Problem: problem}
}

func readVersionFile(fsys fs.FS) string {
	b, err := fs.ReadFile(fsys, "VERSION")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func readPackageVersion(fsys fs.FS) string {
	b, err := fs.ReadFile(fsys, "package.json")
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &p) != nil {
		return ""
	}
	return p.Version
}

func (c *Core) index(m *Manifest) {
	c.m = m
	c.agents, c.skills, c.caps = map[string]*Agent{}, map[string]*Skill{}, map[string]*Capability{}
	for i := range m.Agents {
		c.agents[m.Agents[i].ID] = &m.Agents[i]
	}
	for i := range m.Skills {
		c.skills[m.Skills[i].ID] = &m.Skills[i]
	}
	for i := range m.Vocabulary.Capabilities {
		c.caps[m.Vocabulary.Capabilities[i].ID] = &m.Vocabulary.Capabilities[i]
	}
}

// Version is the distribution's nexus_core_version.
func (c *Core) Version() string { return c.version }

// Agent returns the agent role with the given id.
func (c *Core) Agent(id string) (*Agent, bool) {
	c.load()
	a, ok := c.agents[id]
	return a, ok
}

// Skill returns the skill with the given id.
func (c *Core) Skill(id string) (*Skill, bool) {
	c.load()
	s, ok := c.skills[id]
	return s, ok
}

// Capability returns the capability with the given id.
func (c *Core) Capability(id string) (*Capability, bool) {
	c.load()
	cp, ok := c.caps[id]
	return cp, ok
}

// Tags returns the tag entries in file order.
func (c *Core) Tags() []Tag { return c.load().Vocabulary.Tags }

// MemoryPolicy returns the memory policy.
func (c *Core) MemoryPolicy() *MemoryPolicy { return &c.load().Vocabulary.MemoryPolicy }

// SkillBodyFile is the distribution-relative path of a skill's body.md.
func SkillBodyFile(id string) string { return "skills/" + id + "/body.md" }

// AgentBodyFile is the distribution-relative path of an agent's body.md.
func AgentBodyFile(id string) string { return "agents/" + id + "/body.md" }

// ReadSkillBody returns a skill's body.md text.
func (c *Core) ReadSkillBody(id string) (string, error) {
	_, ok := c.Skill(id)
	return c.readBody("skill", id, ok, SkillBodyFile(id))
}

// ReadAgentBody returns an agent's body.md text.
func (c *Core) ReadAgentBody(id string) (string, error) {
	_, ok := c.Agent(id)
	return c.readBody("agent", id, ok, AgentBodyFile(id))
}

// readBody reads file, the body.md of a skill or agent (kind); listed says
// whether the distribution has that id.
func (c *Core) readBody(kind, id string, listed bool, file string) (string, error) {
	if !listed {
		return "", fmt.Errorf("%s %q is not in %s", kind, id, c.path)
	}
	b, err := fs.ReadFile(c.Dist.FS, file)
	if err != nil {
		return "", fmt.Errorf("read %s body: %w", kind, err)
	}
	return string(b), nil
}
