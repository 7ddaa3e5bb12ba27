//go:build linux

package pluginhost

import (
	"os"
	"syscall"
)

func identity(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{
		Dev: st.Dev, Ino: st.Ino, Size: st.Size,
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(),
	}, true
}
