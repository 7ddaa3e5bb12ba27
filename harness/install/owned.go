package install

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/nexus-harness/nexus/schema"
)

//go:embed nexus-install.schema.json
var recordSchemaFS embed.FS

// recordSchema compiles the record's schema on first use (install,
// uninstall and doctor only; never a hook).
var recordSchema = sync.OnceValue(func() *schema.Set {
	return schema.NewSet("https://nexus-harness.github.io/schema/", recordSchemaFS)
})

// validateRecord checks a record against nexus-install.schema.json.
func validateRecord(name string, data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("%s is not JSON: %v", name, err)
	}
	probs, err := recordSchema().Validate("nexus-install.schema.json", v)
	if err != nil {
		return fmt.Errorf("install record schema: %w", err)
	}
	if len(probs) > 0 {
		var msgs []string
		for _, p := range probs {
			msgs = append(msgs, p.String())
		}
		return fmt.Errorf("%s does not match nexus-install.schema.json: %s", name, strings.Join(msgs, "; "))
	}
	return nil
}

// OwnedFile is a whole file nexus derives and writes into a host's folder
// (an agent, a skill, a package's own files); Path is slash-separated and
// relative to that folder.
type OwnedFile struct {
	Path    string
	Content []byte
}

// RecordName is the file, in the host's folder, where install records
// every whole file it wrote (path and content hash): uninstall removes
// exactly those, and a file whose content no longer has the recorded hash
// was edited by someone else and is never replaced without --force.
const RecordName = "nexus-install.json"

// MaxRecord bounds the record file nexus reads back; MaxOwnedFile an
// agent or skill file nexus compares with what it renders (the largest
// nexus-core 0.10 renders is under 20 KiB).
const (
	MaxRecord    = 1 << 20
	MaxOwnedFile = 1 << 20
)

// OwnedNames are the names beneath the anchor Owned.Sync may write or
// remove: the record and the derived files.
func OwnedNames(prefix string, files []OwnedFile) []string {
	names := []string{path.Join(prefix, RecordName)}
	for _, f := range files {
		names = append(names, path.Join(prefix, f.Path))
	}
	return names
}

// Record is the content of RecordName.
type Record struct {
	// Nexus is the nexus version that last wrote the files; Core the
	// nexus-core version they were rendered from.
	Nexus string        `json:"nexus"`
	Core  string        `json:"nexus_core,omitempty"`
	Files []RecordEntry `json:"files"`
}

// RecordEntry is one owned file.
type RecordEntry struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Owned is how a host keeps the whole files it derives in a folder, with
// their record (RecordName): which hidden names its paths may hold.
type Owned struct {
	// Hidden are the hidden names a derived path may contain (a package's
	// own hidden folder); any other component starting with "." is refused.
	Hidden []string
}

// validPath accepts agents/<name>.md and skills/<name>/SKILL.md style
// relative paths (and the hidden names the host allows): slash-separated,
// clean, no "..", no other hidden components.
func (o Owned) validPath(p string) bool {
	if p == "" || path.IsAbs(p) || path.Clean(p) != p || strings.Contains(p, "\\") {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
		// Hidden names only where the host needs them.
		if strings.HasPrefix(part, ".") && !slices.Contains(o.Hidden, part) {
			return false
		}
	}
	return true
}

// ReadRecord reads the record in a host's folder (nil, nil when there is
// none). An unreadable record is an error naming the file.
func (o Owned) ReadRecord(dir string) (*Record, error) {
	name := filepath.Join(dir, RecordName)
	b, err := safefile.Read(dir, RecordName, MaxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return o.parseRecord(name, b)
}

// parseRecord validates and decodes a record read from the file name.
func (o Owned) parseRecord(name string, data []byte) (*Record, error) {
	if err := validateRecord(name, data); err != nil {
		return nil, fmt.Errorf("%v; move it aside and install again", err)
	}
	var r Record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s is not a valid nexus install record (%v); move it aside and install again", name, err)
	}
	for _, e := range r.Files {
		if !o.validPath(e.Path) || len(e.SHA256) != 64 {
			return nil, fmt.Errorf("%s lists %q with hash %q, which nexus never writes; move the record aside and install again", name, e.Path, e.SHA256)
		}
	}
	return &r, nil
}

// OwnedStatus is the state of one rendered file on disk.
type OwnedStatus struct {
	Path string `json:"path"`
	// State: missing, current, outdated (nexus's, but the distribution or
	// nexus changed), edited (nexus's, changed since by someone else),
	// foreign (a file nexus did not write).
	State string `json:"state"`
}

// Owned file states.
const (
	OwnedMissing  = "missing"
	OwnedCurrent  = "current"
	OwnedOutdated = "outdated"
	OwnedEdited   = "edited"
	OwnedForeign  = "foreign"
)

// Check compares the rendered files with a host's folder, without
// changing anything (nexus doctor).
func (o Owned) Check(dir string, files []OwnedFile) ([]OwnedStatus, error) {
	rec, err := o.ReadRecord(dir)
	if err != nil {
		return nil, err
	}
	recorded := map[string]string{}
	if rec != nil {
		for _, e := range rec.Files {
			recorded[e.Path] = e.SHA256
		}
	}
	var out []OwnedStatus
	for _, f := range files {
		cur, err := safefile.Read(dir, f.Path, MaxOwnedFile)
		st := OwnedStatus{Path: f.Path}
		h0, ours := recorded[f.Path]
		switch {
		case errors.Is(err, fs.ErrNotExist):
			st.State = OwnedMissing
		case err != nil:
			return nil, err
		case bytes.Equal(cur, f.Content):
			st.State = OwnedCurrent
		case ours && hashOf(cur) == h0:
			st.State = OwnedOutdated
		case ours:
			st.State = OwnedEdited
		default:
			st.State = OwnedForeign
		}
		out = append(out, st)
	}
	return out, nil
}

// Sync writes (install) or removes (uninstall) the owned files of a host's
// folder, prefix beneath the anchor a ("" for a package folder), and keeps
// its record. It returns one Change per file it creates, updates, removes
// or leaves alone for a reason, and one for the record itself. Every read,
// write, backup and removal goes beneath the anchor (see anchor.go). Only
// files acts on them: the record says which of them nexus wrote, never
// which files to touch.
func (ow Owned) Sync(a *Anchor, prefix string, files []OwnedFile, o Options, install bool) ([]Change, error) {
	dir := a.Full(prefix)
	for _, f := range files {
		if !ow.validPath(f.Path) || f.Path == RecordName {
			return nil, fmt.Errorf("refusing to write %q: not a plain relative path inside %s", f.Path, dir)
		}
	}
	at := func(p string) string { return path.Join(prefix, p) }
	recName := at(RecordName)
	for _, n := range OwnedNames(prefix, files) {
		if err := a.CheckPlain(n); err != nil {
			return nil, err
		}
	}
	var rec *Record
	if b, exists, err := a.Read(recName, MaxRecord); err != nil {
		return nil, err
	} else if exists {
		if rec, err = ow.parseRecord(a.Full(recName), b); err != nil {
			return nil, err
		}
	}
	if rec == nil && (!install || len(files) == 0) {
		return nil, nil
	}
	recorded := map[string]string{}
	if rec != nil {
		for _, e := range rec.Files {
			recorded[e.Path] = e.SHA256
		}
	}
	read := func(p string) ([]byte, bool, error) { return a.Read(at(p), MaxOwnedFile) }
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	var changes []Change
	next := map[string]string{}
	unchanged := 0
	backup := func(p string, cur []byte) (string, error) {
		b := backupName(a, at(p), now())
		if o.DryRun {
			return a.Full(b), nil
		}
		return a.Full(b), a.Write(b, cur, 0o644)
	}
	write := func(p string, data []byte) error {
		if o.DryRun {
			return nil
		}
		return a.Write(at(p), data, 0o644)
	}
	remove := func(p string) error {
		if o.DryRun {
			return nil
		}
		// Folders left empty (a skill's own folder, agents/, hooks/) go
		// too, up to the host's folder.
		return a.Remove(at(p), prefix)
	}
	// The record is the folder's content, and a cloned repository can ship
	// it: it says which of the derived files nexus wrote, never which
	// files to touch. An entry nexus does not derive is reported only.
	derived := map[string]bool{}
	for _, f := range files {
		derived[f.Path] = true
	}
	var ignored []string
	for p := range recorded {
		if !derived[p] {
			ignored = append(ignored, p)
		}
	}
	sort.Strings(ignored)
	for _, f := range files {
		full := a.Full(at(f.Path))
		h0, ours := recorded[f.Path]
		if !install && !ours {
			continue // not nexus's to remove: not even read
		}
		cur, exists, err := read(f.Path)
		if err != nil {
			return changes, err
		}
		if !install {
			switch {
			case !exists:
			case hashOf(cur) == h0 || o.Force:
				ch := Change{Path: full, Changed: true, Removed: true, Diff: fmt.Sprintf("--- %s (removed, %d lines)\n", full, bytes.Count(cur, []byte("\n")))}
				if hashOf(cur) != h0 {
					b, err := backup(f.Path, cur)
					if err != nil {
						return changes, err
					}
					ch.Backup = b
					ch.Notes = append(ch.Notes, "removed with --force although it was edited after nexus wrote it")
				}
				if err := remove(f.Path); err != nil {
					return changes, err
				}
				changes = append(changes, ch)
			default:
				changes = append(changes, Change{Path: full, Notes: []string{"left in place: it was edited after nexus wrote it, so it is now yours (run with --force to remove it)"}})
			}
			continue
		}
		switch {
		case !exists:
			if err := write(f.Path, f.Content); err != nil {
				return changes, err
			}
			changes = append(changes, Change{Path: full, Changed: true, Created: true, Diff: newFileDiff(full, f.Content)})
			next[f.Path] = hashOf(f.Content)
		case bytes.Equal(cur, f.Content):
			unchanged++
			next[f.Path] = hashOf(f.Content)
		case (ours && hashOf(cur) == h0) || o.Force:
			ch := Change{Path: full, Changed: true, Diff: UnifiedDiff(full+" (before)", full+" (after)", cur, f.Content)}
			if !(ours && hashOf(cur) == h0) {
				b, err := backup(f.Path, cur)
				if err != nil {
					return changes, err
				}
				ch.Backup = b
				ch.Notes = append(ch.Notes, "replaced with --force although "+whyNotOurs(ours))
			}
			if err := write(f.Path, f.Content); err != nil {
				return changes, err
			}
			changes = append(changes, ch)
			next[f.Path] = hashOf(f.Content)
		default:
			changes = append(changes, Change{Path: full, Notes: []string{"left alone: " + whyNotOurs(ours) + "; run with --force to replace it (the current content is kept as a backup)"}})
			if ours {
				next[f.Path] = h0 // still nexus's to remove once it matches again
			}
		}
	}
	if !install {
		// The copies --force kept of edited files stay (they hold someone's
		// edits), named.
		var names []string
		for _, f := range files {
			names = append(names, at(f.Path))
		}
		changes = append(changes, keptOwnedBackups(a, names)...)
	}
	for _, p := range ignored {
		changes = append(changes, Change{Path: a.Full(at(p)), Notes: []string{
			RecordName + " lists it, but it is not one of the agent and skill files nexus renders from the distribution in use, so nexus left it alone and dropped it from the record (remove it yourself if it is an old nexus file)"}})
	}
	// The record itself.
	recPath := a.Full(recName)
	recCh := Change{Path: recPath}
	if unchanged > 0 {
		recCh.Notes = append(recCh.Notes, fmt.Sprintf("%d file(s) nexus wrote here are up to date", unchanged))
	}
	if len(next) == 0 {
		if rec != nil {
			recCh.Changed, recCh.Removed = true, true
			if err := remove(RecordName); err != nil {
				return changes, err
			}
		}
		return append(changes, recCh), nil
	}
	nr := Record{Nexus: o.Version, Core: o.CoreVersion}
	for p, h := range next {
		nr.Files = append(nr.Files, RecordEntry{Path: p, SHA256: h})
	}
	sort.Slice(nr.Files, func(i, j int) bool { return nr.Files[i].Path < nr.Files[j].Path })
	data, err := json.MarshalIndent(nr, "", "  ")
	if err != nil {
		return changes, err
	}
	data = append(data, '\n')
	if err := validateRecord(RecordName, data); err != nil {
		return changes, err
	}
	old, _, err := read(RecordName)
	if err != nil {
		return changes, err
	}
	if !bytes.Equal(old, data) {
		recCh.Changed, recCh.Created = true, rec == nil
		if err := write(RecordName, data); err != nil {
			return changes, err
		}
	}
	return append(changes, recCh), nil
}

func whyNotOurs(ours bool) string {
	if ours {
		return "it was edited after nexus wrote it"
	}
	return "nexus did not write it (it is not in " + RecordName + ")"
}

// newFileDiff summarises a file to be created (a full diff of every new
// agent would bury the interesting changes).
func newFileDiff(name string, content []byte) string {
	return fmt.Sprintf("+++ %s (new file, %d lines)\n", name, bytes.Count(content, []byte("\n")))
}
