// Package e2ekit is what the end-to-end checks of the hosts' real CLIs
// share (internal/e2e/claudecode, internal/e2e/codex): building nexus once,
// finding the pinned CLIs, a scripted Claude Code session against the fake
// Messages API, timing hook processes, medians and the figures file. Its
// code carries the e2e build tag, like the checks; this file only gives
// the package a name for `go build ./...`.
package e2ekit
