// Command hello is the floor a Go process starts at: it writes one line
// and exits. Built as nexus is (CGO_ENABLED=0 -trimpath -ldflags '-s -w'),
// it is the baseline the hook and `nexus version` figures are paired
// with in the same run (scripts/bench-hooks.sh, make bench): a ratio to
// it says what nexus adds to a process start on this machine, whatever
// its load.
package main

import "os"

func main() { os.Stdout.WriteString("hello\n") }
