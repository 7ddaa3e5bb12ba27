// Package memory implements nexus-core's memory lifecycle (digest §5) for
// .nexus/memory/: read observation into memory-access.jsonl, `[m]` saves
// with merge-before-create, and `[m:gc]` reports with opt-in three-signal
// deletion recorded as git commits.
//
// A Manager holds the project's state store, the memory policy of the
// nexus-core distribution and the memory settings of the configuration.
// Every write goes through internal/state (locks, atomic replacement,
// schema checks); deletions go through git (see gc.go and git.go).
package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/internal/state"
	"github.com/nexus-harness/nexus/vocabulary"
)

// LeadAgent is recorded as last_agent when a read has no agent id: the
// main conversation (Lead) read the file itself.
const LeadAgent = "lead"

// Options configure a Manager.
type Options struct {
	// Store is the project's state store (required).
	Store *state.Store
	// Policy is the distribution's memory policy (this or PolicyFunc is
	// required): categories, prefixes, naming pattern.
	Policy *vocabulary.MemoryPolicy
	// PolicyFunc supplies the policy on first need instead: a hook that only
	// observes reads never needs it, and getting it costs decoding the
	// distribution's manifest.
	PolicyFunc func() *vocabulary.MemoryPolicy
	// GC is the forgetting configuration (memory.gc.*).
	GC GCPolicy
	// MergeThreshold is the similarity score at which a save extends an
	// existing file instead of creating one (memory.merge.threshold).
	MergeThreshold float64
	// ToolPrefix is the prefix nexus's MCP tools are served with
	// (mcp.tool_prefix), for the tool names the reports mention.
	ToolPrefix string
	// Now is the clock; nil = the store's clock, else time.Now.
	Now func() time.Time
	// Git is the git binary; "" = "git" from PATH. Only deletion and the
	// ages of never-read files need it.
	Git string
	// OnAutoGC receives what an automatic gc run from a task_close hook did
	// (that hook has nowhere else to report to). nil = discard.
	OnAutoGC func(message string, err error)
}

// Manager runs the memory lifecycle of one project.
type Manager struct {
	store      *state.Store
	policyOnce sync.Once
	policyFn   func() *vocabulary.MemoryPolicy
	categories []vocabulary.MemoryCategory
	naming     *regexp.Regexp
	policyErr  error
	gc         GCPolicy
	threshold  float64
	toolPrefix string
	now        func() time.Time
	git        string
	onAutoGC   func(string, error)
}

// GCPolicy is the forgetting configuration. A nil threshold is unset; a
// signal whose threshold is unset is never met.
type GCPolicy struct {
	Auto                 bool `json:"auto"`
	MinDaysSinceAccess   *int `json:"min_days_since_access"`
	MinCyclesSinceAccess *int `json:"min_cycles_since_access"`
	MaxAccessCount       *int `json:"max_access_count"`
}

// complete reports whether all three signals have thresholds.
func (p GCPolicy) complete() bool {
	return p.MinDaysSinceAccess != nil && p.MinCyclesSinceAccess != nil && p.MaxAccessCount != nil
}

// New returns a Manager.
func New(o Options) (*Manager, error) {
	if o.Store == nil {
		return nil, errors.New("memory: no state store")
	}
	policyFn := o.PolicyFunc
	if o.Policy != nil {
		p := o.Policy
		policyFn = func() *vocabulary.MemoryPolicy { return p }
	}
	if policyFn == nil {
		return nil, errors.New("memory: no memory policy")
	}
	now := o.Now
	if now == nil {
		now = o.Store.Now
	}
	if now == nil {
		now = time.Now
	}
	git := o.Git
	if git == "" {
		git = "git"
	}
	m := &Manager{
		store:      o.Store,
		policyFn:   policyFn,
		gc:         o.GC,
		threshold:  o.MergeThreshold,
		toolPrefix: o.ToolPrefix,
		now:        now,
		git:        git,
		onAutoGC:   o.OnAutoGC,
	}
	if o.Policy != nil {
		if err := m.policy(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// policy resolves the categories and naming rule (once).
func (m *Manager) policy() error {
	m.policyOnce.Do(func() {
		p := m.policyFn()
		if p == nil || len(p.Categories) == 0 {
			m.policyErr = errors.New("memory: the nexus-core memory policy has no categories")
			return
		}
		pattern := p.Naming.Pattern
		if pattern == "" {
			pattern = `^[a-z0-9][a-z0-9-]*\.md$`
		}
		naming, err := regexp.Compile(pattern)
		if err != nil {
			m.policyErr = fmt.Errorf("memory policy naming.pattern %q: %w", pattern, err)
			return
		}
		m.categories, m.naming = p.Categories, naming
	})
	return m.policyErr
}

// Dir is the memory directory.
func (m *Manager) Dir() string { return m.store.L.MemoryDir() }

// Policy returns the forgetting configuration in force.
func (m *Manager) Policy() GCPolicy { return m.gc }

// ErrNotMemoryFile is wrapped by the error for a path that is not a
// regular file inside .nexus/memory/.
var ErrNotMemoryFile = errors.New("not a memory file")

// resolve returns the record key of a memory file: the memory directory
// joined with the file's place inside it (a cleaned absolute path). p may
// be absolute or relative to the project root. The real file (symlinks
// resolved) must be a regular file inside the real memory directory, so a
// symlink that leads out of .nexus/memory/ never counts.
func (m *Manager) resolve(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path: %w", ErrNotMemoryFile)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(m.store.L.Project, p)
	}
	p = filepath.Clean(p)
	dir := m.Dir()
	if rel, ok := inside(dir, p); ok && plainBelow(dir, rel) {
		return p, nil
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%s: no memory directory %s: %w", p, dir, ErrNotMemoryFile)
	}
	realP, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, ErrNotMemoryFile)
	}
	rel, ok := inside(realDir, realP)
	if !ok {
		return "", fmt.Errorf("%s is not inside %s (symlinks are not followed out of it): %w", p, dir, ErrNotMemoryFile)
	}
	st, err := os.Stat(realP)
	if err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file: %w", p, ErrNotMemoryFile)
	}
	return filepath.Join(dir, rel), nil
}

// plainBelow is resolve's fast path (a handful of lstat calls instead of
// resolving every component of both paths): when dir is a real directory
// and no component of rel below it is a symlink, dir/rel is inside dir
// whatever dir's ancestors are, and it only remains to see a regular file.
func plainBelow(dir, rel string) bool {
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	cur := dir
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if err != nil || st.Mode()&os.ModeSymlink != 0 {
			return false
		}
		if i == len(parts)-1 {
			return st.Mode().IsRegular()
		}
	}
	return false
}

// inside returns p relative to dir when p is strictly inside dir.
func inside(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// category returns the policy category with the given id.
func (m *Manager) category(id string) (vocabulary.MemoryCategory, bool) {
	m.policy()
	for _, c := range m.categories {
		if c.ID == id {
			return c, true
		}
	}
	return vocabulary.MemoryCategory{}, false
}

// CategoryIDs lists the memory categories of the distribution's policy,
// in its order.
func (m *Manager) CategoryIDs() []string {
	m.policy()
	ids := make([]string, len(m.categories))
	for i, c := range m.categories {
		ids[i] = c.ID
	}
	return ids
}

// CategoryOf names the category a memory file belongs to by its name's
// prefix (the longest prefix that matches), or "" when none does.
func (m *Manager) CategoryOf(file string) string {
	if m.policy() != nil {
		return ""
	}
	base := filepath.Base(filepath.FromSlash(file))
	best, n := "", 0
	for _, c := range m.categories {
		if c.Prefix != "" && strings.HasPrefix(base, c.Prefix) && len(c.Prefix) > n {
			best, n = c.ID, len(c.Prefix)
		}
	}
	return best
}

// toolName is a nexus tool's registered MCP name (nx_memory_save).
func (m *Manager) toolName(abstract string) string { return m.toolPrefix + abstract }
