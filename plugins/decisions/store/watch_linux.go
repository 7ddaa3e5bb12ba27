//go:build linux

package store

import (
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dirWatch reports changes to the *.md files of one directory through a
// non-blocking inotify descriptor. Reading it is one syscall, and the
// kernel queues an event before the writer's call returns, so a change
// made before a check is always seen by that check.
type dirWatch struct {
	fd int
}

const watchMask = unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

func newDirWatch(dir string) (*dirWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if _, err := unix.InotifyAddWatch(fd, dir, watchMask); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &dirWatch{fd: fd}, nil
}

// changes drains the queue: the *.md names that changed, or all when
// the directory itself changed or the queue overflowed (then every file
// must be re-checked). broken means the watch is gone.
func (w *dirWatch) changes() (names []string, all, broken bool) {
	var buf [16 * 1024]byte
	for {
		n, err := unix.Read(w.fd, buf[:])
		if err == unix.EAGAIN || err == unix.EWOULDBLOCK {
			return names, all, false
		}
		if err != nil || n <= 0 {
			return nil, true, true
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := ""
			if ev.Len > 0 {
				raw := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				name = strings.TrimRight(string(raw), "\x00")
			}
			switch {
			case ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_UNMOUNT) != 0:
				return nil, true, true
			case ev.Mask&unix.IN_Q_OVERFLOW != 0 || name == "":
				all = true
			case strings.HasSuffix(name, ".md"):
				names = append(names, name)
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

func (w *dirWatch) close() { unix.Close(w.fd) }
