//go:build !linux

package state

import "os"

// exchangeReplace needs renameat2(RENAME_EXCHANGE); elsewhere the log is
// replaced by writing a new file and renaming it.
func exchangeReplace(*os.Root, string, []byte) error { return errNoExchange }
