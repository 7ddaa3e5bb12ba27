//go:build !linux

package store

import "errors"

// dirWatch is unavailable off Linux: every check re-validates the stat key.
type dirWatch struct{}

func newDirWatch(string) (*dirWatch, error) {
	return nil, errors.New("no directory watch on this platform")
}

func (w *dirWatch) changes() ([]string, bool, bool) { return nil, true, true }

func (w *dirWatch) close() {}
