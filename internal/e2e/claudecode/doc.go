// Package claudecode holds the end-to-end checks that drive the real Claude
// Code CLI (pinned in scripts/e2e/claude-code, installed by `make e2e`)
// against the scripted fake Messages API of internal/fakeanthropic, with
// nexus installed in the project. The checks are Go tests built with the
// e2e tag (go test -tags e2e -run '^TestE2E' ./internal/e2e/claudecode);
// this file only gives the package a name for `go build ./...`.
package claudecode
