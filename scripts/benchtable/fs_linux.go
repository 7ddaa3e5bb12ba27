package main

import "syscall"

// fsKind names the file system a folder is on, as far as the figures
// care: a durable write's fsyncs are free on tmpfs.
func fsKind(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "unknown"
	}
	switch st.Type {
	case 0x01021994:
		return "tmpfs (fsync costs nothing: not what a user's disk costs)"
	case 0xEF53:
		return "ext4"
	case 0x9123683E:
		return "btrfs"
	case 0x58465342:
		return "xfs"
	case 0x794C7630:
		return "overlayfs"
	}
	return "a disk file system"
}
