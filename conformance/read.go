package conformance

import "github.com/nexus-harness/nexus/internal/safefile"

// Limits on what the runner reads from disk: the state files the harness
// under test wrote into a scratch project (a fixture's files are a few
// KiB; a harness writing more fails its case), and the files and folders
// of an extra fixture directory (--fixtures). Each is read only when it is
// a regular file, without blocking (safefile).
const (
	maxScratchFile    = 16 << 20
	maxFixtureFile    = 16 << 20
	maxFixtureEntries = 10000
)

// readScratch reads a file of a scratch project.
func readScratch(path string) ([]byte, error) { return safefile.ReadFile(path, maxScratchFile) }
