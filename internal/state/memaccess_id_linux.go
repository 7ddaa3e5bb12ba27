package state

import (
	"os"
	"syscall"
	"time"
)

// fileID tells two versions of a file apart. Every atomic replacement
// creates a new inode and sets its ctime (which no user-space call can set
// back), so an unchanged fileID means an unchanged file.
type fileID struct {
	dev, ino, size      uint64
	mtimeSec, mtimeNsec int64
	ctimeSec, ctimeNsec int64
}

func idOf(st os.FileInfo) (fileID, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{
		dev: uint64(s.Dev), ino: s.Ino, size: uint64(s.Size),
		mtimeSec: s.Mtim.Sec, mtimeNsec: s.Mtim.Nsec,
		ctimeSec: s.Ctim.Sec, ctimeNsec: s.Ctim.Nsec,
	}, true
}

// changed is the later of the modification and change times.
func (id fileID) changed() time.Time {
	m, c := time.Unix(id.mtimeSec, id.mtimeNsec), time.Unix(id.ctimeSec, id.ctimeNsec)
	if c.After(m) {
		return c
	}
	return m
}
