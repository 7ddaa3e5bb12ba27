package schema

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestJSONSchemaInitIsCheap guards what third_party/jsonschema exists for
// (README.nexus.md there): upstream's init() compiles the metaschemas of
// all five drafts in every process, several milliseconds and megabytes of
// allocation before main runs; the patched copy compiles them on first use.
// The test binary is run again with GODEBUG=inittrace=1 and no tests, and
// the library's own initialisation must stay small. A bound on bytes, not
// time: the allocation is the same on every machine.
func TestJSONSchemaInitIsCheap(t *testing.T) {
	if os.Getenv("NEXUS_INITCOST_CHILD") != "" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "NEXUS_INITCOST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^init github\.com/santhosh-tekuri/jsonschema/v6 @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no init line for santhosh-tekuri/jsonschema/v6 in:\n%s", out)
	}
	bytes, _ := strconv.Atoi(string(m[1]))
	// The patched init allocates about 10 KB; compiling even one draft's
	// metaschema allocates well over 100 KB.
	const limit = 64 << 10
	if bytes > limit {
		t.Fatalf("jsonschema's init allocates %d bytes (%s allocs), more than %d: does it compile metaschemas at start-up again? See third_party/jsonschema/README.nexus.md", bytes, m[2], limit)
	}
}
