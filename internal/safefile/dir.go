package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
)

// ReadDirIn lists the folder name beneath root ("." for root itself),
// sorted by name, refusing one with more than max entries. The entries'
// types are those of the entries themselves: a symlink is a symlink, never
// the folder it may lead to.
func ReadDirIn(root *os.Root, name string, max int) ([]fs.DirEntry, error) {
	d, err := root.Open(name)
	if err != nil {
		return nil, explainIn(root, name, err)
	}
	defer d.Close()
	p := display(root, name)
	st, err := d.Stat()
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", p, err)
	}
	if !st.IsDir() {
		return nil, &NotRegularError{Path: p, Kind: "a file where a folder was expected"}
	}
	// One more than max tells a folder of exactly max entries from a
	// larger one; nothing more is read.
	ents, err := d.ReadDir(max + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("list %s: %w", p, err)
	}
	if len(ents) > max {
		return nil, &TooManyError{Path: p, Limit: max, What: "entries"}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, nil
}

// ReadDir is ReadDirIn beneath the folder dir itself.
func ReadDir(dir string, max int) ([]fs.DirEntry, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return ReadDirIn(root, ".", max)
}

// WalkLimits bound a walk: how deep it goes below its start, and how many
// entries it visits in all.
type WalkLimits struct {
	Depth   int
	Entries int
}

// WalkIn walks the folder dir beneath root like fs.WalkDir, in lexical
// order, never descending into a symlink (a symlinked folder is reported
// as the symlink it is) and never leaving root. A walk that meets more
// than lim.Entries entries, or a folder more than lim.Depth levels below
// dir, stops with a *TooManyError (passed to fn for the folder, so fn may
// return fs.SkipDir to go on without it, or any error to stop).
func WalkIn(root *os.Root, dir string, lim WalkLimits, fn fs.WalkDirFunc) error {
	st, err := root.Lstat(dir)
	if err != nil {
		return fn(dir, nil, explainIn(root, dir, err))
	}
	seen := 0
	err = walk(root, dir, fs.FileInfoToDirEntry(st), 0, lim, &seen, fn)
	if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

func walk(root *os.Root, name string, d fs.DirEntry, depth int, lim WalkLimits, seen *int, fn fs.WalkDirFunc) error {
	if err := fn(name, d, nil); err != nil {
		if d.IsDir() && errors.Is(err, fs.SkipDir) {
			return nil
		}
		return err // a file's SkipDir skips the rest of its folder (the caller's loop)
	}
	if !d.IsDir() {
		return nil
	}
	var ents []fs.DirEntry
	var err error
	if depth >= lim.Depth {
		err = &TooManyError{Path: display(root, name), Limit: lim.Depth, What: "levels of folders"}
	} else {
		left := max(lim.Entries-*seen, 0)
		ents, err = ReadDirIn(root, name, left)
		var tm *TooManyError
		if errors.As(err, &tm) {
			err = &TooManyError{Path: display(root, name), Limit: lim.Entries, What: "entries in all"}
		}
	}
	if err != nil {
		// As fs.WalkDir: the folder is reported again with the error.
		if err = fn(name, d, err); err != nil && !errors.Is(err, fs.SkipDir) {
			return err
		}
		return nil
	}
	*seen += len(ents)
	for _, e := range ents {
		if err := walk(root, path.Join(name, e.Name()), e, depth+1, lim, seen, fn); err != nil {
			if errors.Is(err, fs.SkipDir) {
				break
			}
			return err
		}
	}
	return nil
}
