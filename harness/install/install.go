// Package install is the host-neutral machinery of `nexus install <host>`
// and `nexus uninstall <host>`: every file is read, written and removed
// beneath one anchor folder (os.Root) and never through a symlink
// (anchor.go); the whole files nexus derives (agents, skills, a package's
// own files) are kept with a record of their hashes, so uninstall removes
// exactly those and a file someone edited is left alone (owned.go); the
// JSON files a host shares with its users are edited keeping their member
// order and spelling (json.go); every change is shown as a diff, a dry run
// writes nothing, and a file nexus replaces keeps a backup beside it.
//
// Each host package (harness/host/<host>) installs its own files with it
// and implements Installer; the host's formats (settings, MCP server
// entries, agent files) stay in the host package.
package install

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/harness/catalog"
	"github.com/nexus-harness/nexus/harness/lifecycle"
)

// Installation scopes.
const (
	ScopeProject = "project"
	ScopeUser    = "user"
)

// Request says what `nexus install <host>` (or uninstall) is asked to do.
type Request struct {
	// Scope is ScopeProject or ScopeUser; Project and Home are the
	// project root and the user's home folder.
	Scope, Project, Home string
	// Command is the nexus executable the host's entries run (absolute).
	Command string
	// CoreDir, when set, is passed to every registered command as --core:
	// the user chose a distribution the host's environment would not find
	// (a flag, NEXUS_CORE_DIR or a user file found through
	// XDG_CONFIG_HOME).
	CoreDir string
	// Catalog derives the distribution's agents and skills for a profile
	// of the host (its variant's names); nil when the distribution could
	// not be loaded: the derived files are then left alone, since nexus
	// acts only on files it derives.
	Catalog func(p lifecycle.HostProfile) (*catalog.Catalog, error)
	// Models is the host's configured model per model_tier
	// (<host>.models), nil when none.
	Models map[string]any
	// Decisions serves the bundled decision store as its own MCP server
	// ("nauro") beside nexus's.
	Decisions bool
	// ServerEnv are the environment variables nexus's MCP servers read (its
	// NEXUS_* settings, the folders it looks in, the decision store's), for
	// a host that passes a server only the variables its entry lists.
	ServerEnv []string
	// StatusLine registers nexus's status line, where the host has one.
	StatusLine bool
	// TrustHooks records, for a host that runs hooks only once its user has
	// reviewed them, that the user trusts the hooks nexus writes (and
	// nothing else).
	TrustHooks bool
	// Getenv reads the environment the command runs in (nil: an empty
	// one), for a host whose folders an environment variable moves.
	Getenv func(string) string
	Options
}

// Env reads a variable of the request's environment.
func (r Request) Env(key string) string {
	if r.Getenv == nil {
		return ""
	}
	return r.Getenv(key)
}

// Installer is a host that nexus can install itself into: what
// `nexus install <host>` and `nexus uninstall <host>` need from it.
type Installer interface {
	Install(Request) ([]Change, error)
	Uninstall(Request) ([]Change, error)
}

// HookTruster is an Installer whose host runs hooks only once its user has
// reviewed them: install offers --trust-hooks (Request.TrustHooks) for it.
type HookTruster interface {
	// TrustHooksHelp is the flag's help.
	TrustHooksHelp() string
}

// StatusLiner is an Installer whose host has a status line nexus can
// register: install offers --statusline (Request.StatusLine) for it, and
// only for it.
type StatusLiner interface {
	// StatusLineHelp is the flag's help.
	StatusLineHelp() string
}

// Options are what every write of an install shares.
type Options struct {
	// DryRun computes and reports the changes without writing anything.
	DryRun bool
	// Force replaces (or removes) owned files edited since nexus wrote
	// them, and files of the same name nexus did not write, keeping a
	// backup.
	Force bool
	// Now is the clock of backup names (nil = time.Now).
	Now func() time.Time
	// Version and CoreVersion are stored in the record.
	Version, CoreVersion string
}

// Change is the outcome for one file.
type Change struct {
	Path    string `json:"path"`
	Changed bool   `json:"changed"`
	Diff    string `json:"diff,omitempty"`
	// Backup is the copy of the previous content (empty when the file did
	// not exist, nothing changed, or on a dry run).
	Backup string `json:"backup,omitempty"`
	// Notes report entries left alone (another tool's server named nexus).
	Notes []string `json:"notes,omitempty"`
	// Removed is true when the change deletes the file; Created when it
	// writes a file that did not exist.
	Removed bool `json:"removed,omitempty"`
	Created bool `json:"created,omitempty"`
}

// MaxSettings bounds a settings file nexus reads and rewrites.
const MaxSettings = 16 << 20

// EditJSON applies edit to the JSON object in name beneath the anchor (an
// empty one when the file is missing) and writes the result: nothing when
// it is unchanged (reformatting alone is no change), the file's removal
// when edit left it empty, a backup of the old content beside it. It
// returns the change with its diff and the notes edit returned. A file that
// is not JSON is refused, never rewritten.
func EditJSON(a *Anchor, name string, o Options, edit func(*Object) []string) (Change, error) {
	return editJSON(a, JSONFile{Name: name, Edit: edit}, o)
}

// JSONFile is a JSON file a host shares with its users, and how nexus
// edits it.
type JSONFile struct {
	// Name is the file beneath the anchor.
	Name string
	// Edit makes the change asked for (install or uninstall) and returns
	// notes.
	Edit func(*Object) []string
	// Strip takes out every entry nexus adds to the file (uninstall's
	// edit). With it a previous content holding nothing but nexus's
	// entries is not backed up, and an uninstall (Restoring) removes the
	// backups that hold nothing the file does not (PruneBackups); nil:
	// every previous content is backed up, and backups stay.
	Strip func(*Object)
	// Restoring marks an uninstall: after the edit, the file's backups are
	// pruned.
	Restoring bool
}

// EditJSONFile is EditJSON with what the host says of the file
// (JSONFile): the file's change, then, for an uninstall, one for each of
// its backups removed or kept (PruneBackups).
func EditJSONFile(a *Anchor, f JSONFile, o Options) ([]Change, error) {
	ch, err := editJSON(a, f, o)
	if err != nil || !f.Restoring || f.Strip == nil {
		return []Change{ch}, err
	}
	more, err := PruneBackups(a, f.Name, o, StripJSON(f.Strip))
	return append([]Change{ch}, more...), err
}

func editJSON(a *Anchor, f JSONFile, o Options) (Change, error) {
	name, edit := f.Name, f.Edit
	var restore Restore
	if f.Strip != nil {
		restore = StripJSON(f.Strip)
	}
	full := a.Full(name)
	return EditFile(a, name, MaxSettings, o, restore, func(before []byte, exists bool) ([]byte, bool, []string, error) {
		root := NewObject()
		if exists && len(bytes.TrimSpace(before)) > 0 {
			var err error
			if root, err = ParseObject(before); err != nil {
				return nil, false, nil, fmt.Errorf("%s is not valid JSON (%v); nexus will not rewrite it: fix it by hand first", full, err)
			}
		}
		// Compare against the file as nexus would print it, so reformatting
		// alone never counts as a change.
		normal := Encode(root)
		notes := edit(root)
		after := Encode(root)
		if bytes.Equal(normal, after) || (!exists && root.Len() == 0) {
			return before, false, notes, nil
		}
		// A file left as {} holds nothing: remove it rather than keep a stub.
		return after, root.Len() == 0, notes, nil
	})
}

// EditFile applies edit to the file name beneath the anchor and writes
// what it returns: edit gets the current content (exists false when the
// file is missing) and returns the new content, or remove to delete the
// file, with notes for the change. Content equal to the current one is no
// change and writes nothing; otherwise the change carries the diff, the old
// content is kept as a backup beside the file, and a dry run stops before
// writing. An error from edit leaves the file as it is. limit bounds the
// file read.
//
// restore is for a file a host shares with its users: what uninstall makes
// of a content (nexus's entries taken out), so a previous content holding
// nothing but nexus's entries is kept as no backup; after an uninstall's
// last edit of the file, PruneBackups with the same restore removes the
// backups that hold nothing the file does not (EditJSONFile does both for a
// JSON file). nil: every previous content is backed up.
func EditFile(a *Anchor, name string, limit int64, o Options, restore Restore, edit func(before []byte, exists bool) (after []byte, remove bool, notes []string, err error)) (Change, error) {
	full := a.Full(name)
	ch := Change{Path: full}
	before, exists, err := a.Read(name, limit)
	if err != nil {
		return ch, err
	}
	after, remove, notes, err := edit(before, exists)
	ch.Notes = notes
	if err != nil {
		return ch, err
	}
	if remove && !exists || !remove && bytes.Equal(before, after) {
		return ch, nil
	}
	ch.Changed, ch.Removed = true, remove
	old := before
	if !exists {
		old = nil
	}
	if remove {
		after = nil
	}
	ch.Removed, ch.Created = remove, !exists
	ch.Diff = UnifiedDiff(full+" (before)", full+" (after)", old, after)
	if o.DryRun {
		return ch, nil
	}
	// A content that holds nothing but nexus's own entries has nothing of
	// the user's to keep.
	if exists && !onlyNexus(before, restore) {
		now := time.Now
		if o.Now != nil {
			now = o.Now
		}
		b := backupName(a, name, now())
		ch.Backup = a.Full(b)
		if err := a.Write(b, before, 0o600); err != nil {
			return ch, fmt.Errorf("back up %s: %w", full, err)
		}
	}
	if remove {
		return ch, a.Remove(name, path.Dir(name))
	}
	if err := a.Write(name, after, a.Perm(name, 0o644)); err != nil {
		return ch, err
	}
	return ch, nil
}

// backupName returns a backup name beside name that is not taken yet.
func backupName(a *Anchor, name string, t time.Time) string {
	base := fmt.Sprintf("%s.nexus-backup-%s", name, t.UTC().Format("20060102T150405Z"))
	b := base
	for i := 1; a.Exists(b); i++ {
		b = fmt.Sprintf("%s-%d", base, i)
	}
	return b
}

// GetAs returns member k of o as a T (the zero T when absent or of another
// type).
func GetAs[T any](o *Object, k string) (T, bool) {
	v, _ := o.Get(k)
	t, ok := v.(T)
	return t, ok
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:=@%,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Packager is a host nexus can also be packaged for: a folder the host
// installs itself (a plugin package), written with
// `nexus install <host> --package DIR`.
type Packager interface {
	// WritePackage writes (install) or removes the package in dir.
	WritePackage(dir string, req Request, install bool) ([]Change, error)
	// PackageHint tells the user how to add the package written in dir to
	// the host.
	PackageHint(dir string) string
}

// BothScopes is the warning an install adds when nexus is installed in the
// other scope too (what, found in file there: "nexus's hooks are
// registered"): the host loads both, so every event would reach nexus
// twice. runs says what the host does with both (that it runs the hooks
// of both scopes); the warning names the two commands that keep one.
func BothScopes(hostName, what, runs, file string, req Request) Change {
	other := ScopeUser
	if req.Scope == ScopeUser {
		other = ScopeProject
	}
	return Change{Path: file, Notes: []string{fmt.Sprintf(
		"warning: %s here too (the %s scope): %s, so every event would reach nexus twice. Keep one: `nexus uninstall %s --scope user` removes the user scope's, `nexus uninstall %s` in %s the project's",
		what, other, runs, hostName, hostName, ShellQuote(req.Project))}}
}
