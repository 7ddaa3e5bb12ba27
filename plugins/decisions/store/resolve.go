package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNoProject means no project store could be found for the request.
var ErrNoProject = errors.New("no project store found")

// Location names how a caller asked for a store.
type Location struct {
	Home      string // $NAURO_HOME
	Cwd       string // where to start looking for .nauro/config.json
	ProjectID string // optional: a v2 project name, else a v1 name
	StoreDir  string // optional: an explicit project store folder (nexus extension)
}

// Resolved is a located project store.
type Resolved struct {
	Store *FS
	ID    string // v2 id, "" for v1 or explicit stores
	Name  string
}

// Resolve finds the project store, in the reference's order: an explicit
// folder; the repo pointer found by walking up from Cwd; ProjectID as a v2
// then v1 name; the registry entry whose repo path holds Cwd.
func Resolve(loc Location) (*Resolved, error) {
	if loc.StoreDir != "" {
		fs, err := Open(loc.StoreDir)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNoProject, err)
		}
		return &Resolved{Store: fs, Name: filepath.Base(fs.Root())}, nil
	}
	reg, err := LoadRegistry(loc.Home)
	if err != nil {
		return nil, err
	}
	open := func(id, name string) (*Resolved, error) {
		p, err := reg.StorePath(id)
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%w: the store %s does not exist", ErrNoProject, p)
		}
		fs, err := Open(p)
		if err != nil {
			return nil, err
		}
		r := &Resolved{Store: fs, Name: name}
		if reULID().MatchString(id) {
			r.ID = id
		}
		return r, nil
	}
	if loc.Cwd != "" {
		rc, err := FindRepoConfig(loc.Cwd)
		switch {
		case err == nil:
			return open(rc.ID, rc.Name)
		case !errors.Is(err, ErrNoRepoConfig):
			return nil, err
		}
	}
	if loc.ProjectID != "" {
		p, err := reg.ByName(loc.ProjectID)
		if err != nil {
			return nil, err
		}
		if p != nil {
			return open(p.ID, p.Name)
		}
		if reg.HasV1(loc.ProjectID) {
			return open(loc.ProjectID, loc.ProjectID)
		}
	}
	if loc.Cwd != "" {
		if p := reg.ByPath(loc.Cwd); p != nil {
			return open(p.ID, p.Name)
		}
		if n := reg.V1ByPath(loc.Cwd); n != "" {
			return open(n, n)
		}
	}
	return nil, ErrNoProject
}
