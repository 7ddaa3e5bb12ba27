//go:build !unix

package store

import "os"

// Off Unix the store's locks are advisory no-ops; writes stay atomic.
func tryFlock(*os.File) (bool, error) { return true, nil }
