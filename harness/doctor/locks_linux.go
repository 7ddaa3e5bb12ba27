package doctor

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockHolder names the process holding a flock on path, from /proc/locks
// ("1: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF").
func lockHolder(path string) (string, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return "", false
	}
	defer f.Close()
	pid, found := findHolder(f, uint64(sys.Ino), uint64(unix.Major(uint64(sys.Dev))), uint64(unix.Minor(uint64(sys.Dev))))
	if !found {
		return "", false
	}
	desc := fmt.Sprintf("pid %d", pid)
	if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && len(cmd) > 0 {
		args := strings.Fields(string(bytes.ReplaceAll(bytes.TrimRight(cmd, "\x00"), []byte{0}, []byte{' '})))
		if len(args) > 6 {
			args = append(args[:6], "...")
		}
		desc += " (" + strings.Join(args, " ") + ")"
	}
	return desc, true
}

// findHolder returns the pid of a granted FLOCK on the inode. The device
// decides between inodes of the same number when it matches; some file
// systems (overlayfs) report a different device to stat than to
// /proc/locks, so an inode match alone is accepted otherwise.
func findHolder(r io.Reader, ino, major, minor uint64) (int, bool) {
	sc := bufio.NewScanner(r)
	best, bestExact := 0, false
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// Waiting requests are printed with "->" after the ordinal.
		if len(fields) < 6 || fields[1] == "->" || fields[1] != "FLOCK" {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		parts := strings.Split(fields[5], ":")
		if len(parts) != 3 {
			continue
		}
		i, err1 := strconv.ParseUint(parts[2], 10, 64)
		ma, err2 := strconv.ParseUint(parts[0], 16, 64)
		mi, err3 := strconv.ParseUint(parts[1], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || i != ino {
			continue
		}
		exact := ma == major && mi == minor
		if best == 0 || (exact && !bestExact) {
			best, bestExact = pid, exact
		}
	}
	return best, best != 0
}
