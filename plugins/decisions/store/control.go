package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
	"github.com/nexus-harness/nexus/plugins/decisions/internal/pyjson"
)

// Control-plane names and versions.
const (
	HomeEnv            = decisionsapi.EnvHome
	DefaultHomeDir     = ".nauro"
	RegistryFile       = "registry.json"
	ProjectsDir        = "projects"
	RepoConfigDir      = ".nauro"
	RepoConfigFile     = "config.json"
	RepoConfigSchema   = 1
	RegistrySchemaV1   = 1
	RegistrySchemaV2   = 2
	ModeLocal          = "local"
	ModeCloud          = "cloud"
	crockford          = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	projectNameMaxRune = 100
)

var reULID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{26}$`) })

// Home returns $NAURO_HOME, else ~/.nauro.
func Home(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if h := getenv(HomeEnv); h != "" {
		return filepath.Abs(h)
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the home directory for the Nauro store: %w (set %s)", err, HomeEnv)
	}
	return filepath.Join(u, DefaultHomeDir), nil
}

// NewULID returns a ULID: 48 bits of milliseconds then 80 random bits, in
// Crockford base-32.
func NewULID(now time.Time) (string, error) {
	var b [16]byte
	ms := uint64(now.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	if _, err := rand.Read(b[6:]); err != nil {
		return "", fmt.Errorf("generate project id: %w", err)
	}
	// 128 bits -> 26 base-32 digits (the first carries 3 bits).
	out := make([]byte, 26)
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(b[i])
		lo = lo<<8 | uint64(b[8+i])
	}
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | (hi&31)<<59
		hi >>= 5
	}
	return string(out), nil
}

// ValidProjectName checks the reference's name rules and returns the
// stripped name.
func ValidProjectName(name string) (string, error) {
	n := strings.TrimSpace(name)
	switch {
	case n == "" || len([]rune(n)) > projectNameMaxRune:
		return "", fmt.Errorf("project name must be 1-%d characters", projectNameMaxRune)
	case strings.ContainsAny(n, `/\`) || strings.Contains(n, ".."):
		return "", fmt.Errorf("project name %q must not contain '/', '\\' or '..'", n)
	}
	for _, r := range n {
		if !unicode.IsPrint(r) {
			return "", fmt.Errorf("project name %q contains a non-printable character", n)
		}
	}
	return n, nil
}

// RepoConfig is <repo>/.nauro/config.json.
type RepoConfig struct {
	Mode      string
	ID        string
	Name      string
	ServerURL string
	Path      string // the file it was read from
}

// ErrNoRepoConfig means no .nauro/config.json exists above the directory.
var ErrNoRepoConfig = errors.New("no .nauro/config.json found")

// FindRepoConfig walks up from dir to the filesystem root looking for
// .nauro/config.json and validates the first one found.
func FindRepoConfig(dir string) (*RepoConfig, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for {
		p := filepath.Join(d, RepoConfigDir, RepoConfigFile)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return ReadRepoConfig(p)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil, ErrNoRepoConfig
		}
		d = parent
	}
}

// ReadRepoConfig reads and validates a repo pointer file.
// It is a repository's file: read beneath its .nauro folder, without
// blocking, only when regular, through maxControlFile.
func ReadRepoConfig(p string) (*RepoConfig, error) {
	var b []byte
	r, err := os.OpenRoot(filepath.Dir(p))
	if err == nil {
		b, err = readIn(r, filepath.Base(p), maxControlFile)
		r.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	bad := func(msg string) error { return fmt.Errorf("%s: invalid repo config: %s", p, msg) }
	v, err := pyjson.Parse(string(b))
	if err != nil {
		return nil, bad("not valid JSON")
	}
	o, ok := v.(*pyjson.Object)
	if !ok {
		return nil, bad("not a JSON object")
	}
	if sv, _ := o.Get("schema_version"); sv != int64(RepoConfigSchema) {
		return nil, bad(fmt.Sprintf("Unknown repo config schema_version=%v. Upgrade nauro (or nexus) to read it.", sv))
	}
	c := &RepoConfig{Mode: strField(o, "mode"), ID: strField(o, "id"), Name: strField(o, "name"), ServerURL: strField(o, "server_url"), Path: p}
	switch {
	case c.Mode != ModeLocal && c.Mode != ModeCloud:
		return nil, bad(fmt.Sprintf("mode must be %q or %q", ModeLocal, ModeCloud))
	case !reULID().MatchString(c.ID):
		return nil, bad("id must be a 26-character ULID")
	case c.Name == "":
		return nil, bad("name must not be empty")
	case c.Mode == ModeCloud && c.ServerURL == "":
		return nil, bad("cloud mode needs server_url")
	}
	return c, nil
}

// RepoGitignore is the .gitignore nexus writes in a repository's .nauro
// folder when it has none: the pointer (config.json) is meant to be
// committed, the lock taken while writing it (config.lock) is not.
const RepoGitignore = "# Lock files of the decision store's pointer (nexus decision, Nauro): never committed.\n*.lock\n"

// WriteRepoConfig writes <repo>/.nauro/config.json atomically, and
// .nauro/.gitignore first when the folder has none (RepoGitignore).
func WriteRepoConfig(repo string, c *RepoConfig) error {
	o := pyjson.NewObject().Set("mode", c.Mode).Set("id", c.ID).Set("name", c.Name).Set("schema_version", RepoConfigSchema)
	if c.ServerURL != "" {
		o.Set("server_url", c.ServerURL)
	}
	if err := ensureRepoGitignore(repo); err != nil {
		return err
	}
	return controlWrite(repo, RepoConfigDir+"/"+RepoConfigFile, pyjson.File(o))
}

// ensureRepoGitignore writes .nauro/.gitignore beneath repo when missing
// (an existing one is the user's and stays as it is).
func ensureRepoGitignore(repo string) error {
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", repo, err)
	}
	b, err := Open(repo)
	if err != nil {
		return err
	}
	defer b.Close()
	b.control = true
	rel := RepoConfigDir + "/.gitignore"
	_, err = readIn(b.r, rel, maxControlFile)
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read %s: %w", rel, b.explain(rel, err))
	}
	return b.writeAtomic(rel, []byte(RepoGitignore))
}

// controlWrite replaces a control-plane file atomically under
// "<name>.lock" (path.with_suffix(".lock"), as the reference names it),
// beneath base: a repository can ship .nauro as a symlink, and the write
// must not follow it out of the repository.
func controlWrite(base, rel, text string) error {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", base, err)
	}
	b, err := Open(base)
	if err != nil {
		return err
	}
	defer b.Close()
	b.control = true
	lock, err := b.lock(context.Background(), strings.TrimSuffix(rel, path.Ext(rel))+".lock")
	if err != nil {
		return err
	}
	defer lock.Release()
	return b.writeAtomic(rel, []byte(text))
}

// Project is a registry v2 entry.
type Project struct {
	ID        string
	Name      string
	Mode      string
	RepoPaths []string
	ServerURL string
}

// Registry is $NAURO_HOME/registry.json.
type Registry struct {
	Home     string
	Version  int // 0 when the file is missing or unreadable
	Projects []Project
	v1       map[string][]string // v1 name -> repo paths
	// raw is the file as read: Save keeps its member order and the members
	// nexus does not know (at the top and in each project entry).
	raw *pyjson.Object
}

// LoadRegistry reads the registry. A missing or corrupt file is an empty
// v2 registry; a v1 file is kept for read-only lookups.
func LoadRegistry(home string) (*Registry, error) {
	r := &Registry{Home: home, Version: RegistrySchemaV2}
	b, err := readPath(filepath.Join(home, RegistryFile), maxControlFile)
	if err != nil {
		if os.IsNotExist(err) {
			return r, nil
		}
		return nil, fmt.Errorf("read registry: %w", err)
	}
	v, err := pyjson.Parse(string(b))
	o, ok := v.(*pyjson.Object)
	if err != nil || !ok {
		return r, nil
	}
	projects, _ := o.Get("projects")
	po, _ := projects.(*pyjson.Object)
	switch sv, _ := o.Get("schema_version"); sv {
	case int64(RegistrySchemaV1):
		r.Version = RegistrySchemaV1
		r.v1 = map[string][]string{}
		if po != nil {
			for _, name := range po.Keys() {
				e, _ := po.Get(name)
				if eo, ok := e.(*pyjson.Object); ok {
					r.v1[name] = strList(eo, "repo_paths")
				}
			}
		}
		return r, nil
	case int64(RegistrySchemaV2):
	default:
		return nil, fmt.Errorf("registry %s has unknown schema_version %v", filepath.Join(home, RegistryFile), sv)
	}
	r.raw = o
	if po != nil {
		for _, id := range po.Keys() {
			e, _ := po.Get(id)
			eo, ok := e.(*pyjson.Object)
			if !ok {
				continue
			}
			r.Projects = append(r.Projects, Project{ID: id, Name: strField(eo, "name"), Mode: strField(eo, "mode"),
				RepoPaths: strList(eo, "repo_paths"), ServerURL: strField(eo, "server_url")})
		}
	}
	return r, nil
}

func strList(o *pyjson.Object, k string) []string {
	v, _ := o.Get(k)
	arr, _ := v.([]any)
	var out []string
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Save writes the registry as v2 (refusing to overwrite a v1 file, which
// needs the reference's one-time migration).
func (r *Registry) Save() error {
	if r.Version == RegistrySchemaV1 {
		return fmt.Errorf("registry %s is schema v1; migrate it with `nauro migrate` before nexus can register projects", filepath.Join(r.Home, RegistryFile))
	}
	// Nauro writes {"projects": ..., "schema_version": 2} for a new
	// registry and keeps a loaded one's order; so does nexus.
	o := r.raw
	if o == nil {
		o = pyjson.NewObject().Set("projects", nil).Set("schema_version", RegistrySchemaV2)
	}
	var old *pyjson.Object
	if v, ok := o.Get("projects"); ok {
		old, _ = v.(*pyjson.Object)
	}
	projects := pyjson.NewObject()
	for _, p := range r.Projects {
		e := pyjson.NewObject()
		if old != nil {
			if v, ok := old.Get(p.ID); ok {
				if eo, ok := v.(*pyjson.Object); ok {
					e = eo
				}
			}
		}
		e.Set("name", p.Name).Set("mode", p.Mode).Set("repo_paths", strsAny(p.RepoPaths))
		if p.Mode == ModeCloud && p.ServerURL != "" {
			e.Set("server_url", p.ServerURL)
		}
		projects.Set(p.ID, e)
	}
	o.Set("projects", projects).Set("schema_version", RegistrySchemaV2)
	return controlWrite(r.Home, RegistryFile, pyjson.File(o))
}

func strsAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// StorePath returns projects/<id>, refusing ids that leave projects/.
func (r *Registry) StorePath(id string) (string, error) {
	base := filepath.Join(r.Home, ProjectsDir)
	p := filepath.Join(base, id)
	if id == "" || filepath.Dir(p) != base {
		return "", fmt.Errorf("project id %q does not name a store under %s", id, base)
	}
	return p, nil
}

// ByName returns the unique v2 project with this name.
func (r *Registry) ByName(name string) (*Project, error) {
	var found []*Project
	for i := range r.Projects {
		if r.Projects[i].Name == name {
			found = append(found, &r.Projects[i])
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%d projects are named %q; pass the project id instead", len(found), name)
}

// ByPath returns the project whose repo path equals dir or contains it
// (the deepest match wins).
func (r *Registry) ByPath(dir string) *Project {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	var best *Project
	bestLen := -1
	for i := range r.Projects {
		for _, rp := range r.Projects[i].RepoPaths {
			if abs == rp || strings.HasPrefix(abs, strings.TrimSuffix(rp, string(filepath.Separator))+string(filepath.Separator)) {
				if len(rp) > bestLen {
					best, bestLen = &r.Projects[i], len(rp)
				}
			}
		}
	}
	return best
}

// V1ByPath returns the v1 project name whose repo path holds dir.
func (r *Registry) V1ByPath(dir string) string {
	abs, _ := filepath.Abs(dir)
	names := make([]string, 0, len(r.v1))
	for n := range r.v1 {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, rp := range r.v1[n] {
			if abs == rp || strings.HasPrefix(abs, rp+string(filepath.Separator)) {
				return n
			}
		}
	}
	return ""
}

// HasV1 reports whether name is a v1 project.
func (r *Registry) HasV1(name string) bool { _, ok := r.v1[name]; return ok }

// Register adds a local project for repo (or returns the existing one).
func (r *Registry) Register(name, repo string, now time.Time) (*Project, error) {
	n, err := ValidProjectName(name)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(repo)
	if err != nil {
		return nil, err
	}
	if p := r.ByPath(abs); p != nil && p.Name == n {
		return p, nil
	}
	id, err := NewULID(now)
	if err != nil {
		return nil, err
	}
	r.Projects = append(r.Projects, Project{ID: id, Name: n, Mode: ModeLocal, RepoPaths: []string{abs}})
	return &r.Projects[len(r.Projects)-1], nil
}
