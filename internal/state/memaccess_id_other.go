//go:build !linux

package state

import (
	"os"
	"time"
)

// fileID is unused off Linux: without a ctime in the portable stat result
// nexus cannot prove a file unchanged, so the access-log cache is off.
type fileID struct{}

func idOf(os.FileInfo) (fileID, bool) { return fileID{}, false }

func (fileID) changed() time.Time { return time.Time{} }
