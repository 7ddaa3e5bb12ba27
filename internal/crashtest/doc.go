// Package crashtest holds the tests that nexus's state survives what real
// sessions do to it: nexus processes SIGKILLed at random points while they
// write (crash consistency), and two harnesses sharing one .nexus/ at the
// same time (co-running). The package has no code of its own; the tests
// drive the built nexus binary and, for the in-process write paths, the
// test binary re-executed as a worker. See docs/hardening.md.
//
// Every scenario calls t.Parallel: each has its own project and home
// folders and shares only the built binary, and none times its kills on
// the clock alone (they follow the measured lifetime of a process, or land
// anywhere in a window the process outlives), so running them side by side
// changes where kills land, not what is checked.
package crashtest
