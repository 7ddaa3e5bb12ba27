package install

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/nexus-harness/nexus/internal/safefile"
)

// Backups. Before nexus changes a file a host shares with its users it
// keeps a copy of the old content beside it (<file>.nexus-backup-<time>),
// unless that content holds nothing but nexus's own entries: then there is
// nothing of the user's to keep. Uninstall restores the file and then
// removes each of its backups that holds nothing the file does not hold
// now (what uninstall makes of the backup is, byte for byte, the file as
// it is, or nothing where the file is gone); every other backup stays and
// is named, with why. So install, then uninstall, leaves no backup behind
// in a clean project, and never deletes a copy that still holds something.

// maxBackupEntries bounds the folder listing that looks for a file's
// backups (a home folder can be large).
const maxBackupEntries = 100_000

// backupPattern matches the names backupName gives.
var backupPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\.nexus-backup-\d{8}T\d{6}Z(-\d+)?$`)
})

// Restore is what uninstall makes of a file's content: the content
// without nexus's entries (keep false: nothing is left, the file goes).
type Restore func(content []byte) (after []byte, keep bool, err error)

// StripJSON is the Restore of a JSON file whose nexus entries strip takes
// out: the same steps as EditJSON's, so a content that strip leaves
// unchanged stays byte for byte as it is.
func StripJSON(strip func(*Object)) Restore {
	return func(content []byte) ([]byte, bool, error) {
		if len(bytes.TrimSpace(content)) == 0 {
			return nil, false, nil
		}
		root, err := ParseObject(content)
		if err != nil {
			return nil, false, err
		}
		normal := Encode(root)
		strip(root)
		if root.Len() == 0 {
			return nil, false, nil
		}
		after := Encode(root)
		if bytes.Equal(normal, after) {
			return content, true, nil
		}
		return after, true, nil
	}
}

// onlyNexus reports whether content holds nothing but nexus's entries
// (restore leaves nothing of it).
func onlyNexus(content []byte, restore Restore) bool {
	if restore == nil {
		return false
	}
	_, keep, err := restore(content)
	return err == nil && !keep
}

// Backups lists the backups nexus made of name (names beneath the
// anchor, sorted).
func (a *Anchor) Backups(name string) ([]string, error) {
	if a.root == nil {
		return nil, nil
	}
	dir, base := path.Dir(name), path.Base(name)
	ents, err := safefile.ReadDirIn(a.root, dir, maxBackupEntries)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, base+".nexus-backup-") && backupPattern().MatchString(n) {
			out = append(out, path.Join(dir, n))
		}
	}
	return out, nil
}

// PruneBackups removes the backups of name that hold nothing the file
// does not hold now (see Backups above) and names every other one with
// why it stays. It runs after uninstall restored the file.
func PruneBackups(a *Anchor, name string, o Options, restore Restore) ([]Change, error) {
	backups, err := a.Backups(name)
	if err != nil {
		return []Change{{Path: a.Full(name), Notes: []string{"its backups (" + path.Base(name) + ".nexus-backup-*) were not looked for: " + err.Error()}}}, nil
	}
	if len(backups) == 0 {
		return nil, nil
	}
	cur, exists, err := a.Read(name, MaxSettings)
	if err != nil {
		return nil, err
	}
	file := a.Full(name)
	var changes []Change
	for _, b := range backups {
		full := a.Full(b)
		content, _, err := a.Read(b, MaxSettings)
		if err != nil {
			changes = append(changes, Change{Path: full, Notes: []string{"kept: a backup of " + file + " nexus could not read (" + err.Error() + ")"}})
			continue
		}
		after, keep, err := restore(content)
		switch {
		case err != nil:
			changes = append(changes, Change{Path: full, Notes: []string{"kept: a backup of " + file + " that nexus cannot parse (" + err.Error() + "), so it cannot tell what it holds; delete it when you no longer need it"}})
			continue
		case keep != exists || keep && !bytes.Equal(after, cur):
			changes = append(changes, Change{Path: full, Notes: []string{"kept: a backup nexus made of " + file + " before changing it, which differs from the file as it is now (without nexus's entries); compare them and delete the backup when you no longer need it"}})
			continue
		}
		ch := Change{Path: full, Changed: true, Removed: true, Notes: []string{"a backup nexus made of " + file + ": nothing in it is missing from the file as it is now"}}
		if !o.DryRun {
			if err := a.Remove(b, path.Dir(b)); err != nil {
				return changes, fmt.Errorf("remove the backup %s: %w", full, err)
			}
		}
		changes = append(changes, ch)
	}
	return changes, nil
}

// keptOwnedBackups names the backups of derived files (made by --force)
// left beside them: each holds a version someone edited.
func keptOwnedBackups(a *Anchor, names []string) []Change {
	var out []Change
	for _, n := range names {
		bs, err := a.Backups(n)
		if err != nil {
			continue
		}
		for _, b := range bs {
			out = append(out, Change{Path: a.Full(b), Notes: []string{"kept: the copy of " + a.Full(n) + " as it was edited, which --force replaced or removed; delete it when you no longer need it"}})
		}
	}
	return out
}
