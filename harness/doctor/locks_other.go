//go:build !linux

package doctor

// lockHolder is only known where /proc/locks exists.
func lockHolder(string) (string, bool) { return "", false }
