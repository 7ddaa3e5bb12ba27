// Package codex holds the end-to-end checks that drive the real Codex CLI
// (pinned in scripts/e2e/codex, installed by `make e2e`) against the
// scripted fake Responses API of internal/fakeresponses, offline, in a
// temporary project with its own HOME. The checks are Go tests built with
// the e2e tag (go test -tags e2e -run '^TestE2E' ./internal/e2e/codex);
// this file only gives the package a name for `go build ./...`.
// docs/codex-notes.md records what they and the exploration runs showed.
package codex
