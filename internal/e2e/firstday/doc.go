// Package firstday holds the scripted first day with nexus (issue 26): a
// fresh clone of this repository built and checked with `make run`, nexus
// installed into a sample project, doctor, a typo in the configuration
// that the session's real hooks show while the gate stays on, a broken
// configuration file, uninstall back to a clean `git status`, and the
// exit statuses on the way. It is a Go test built with the e2e tag
// (go test -tags e2e -run '^TestE2E' ./internal/e2e/firstday), run by
// `make e2e`; this file only gives the package a name for `go build ./...`.
package firstday
