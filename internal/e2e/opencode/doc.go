// Package opencode holds the end-to-end checks that drive the real OpenCode
// CLI (npm opencode-ai, pinned in scripts/e2e/opencode, installed by `make
// e2e`) against the scripted Chat Completions API of internal/fakechat. The
// checks are Go tests built with the e2e tag (go test -tags e2e -run
// '^TestE2E' ./internal/e2e/opencode); this file only gives the package a
// name for `go build ./...`. docs/opencode-notes.md records what they and
// the exploration behind them found.
package opencode
