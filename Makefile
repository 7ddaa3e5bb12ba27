# Build helpers. Every tool is fetched through the Go module proxy at a pinned
# version; nothing needs installing first.

BUF ?= go run github.com/bufbuild/buf/cmd/buf@v1.75.0

.PHONY: proto proto-check

# Regenerate the plugin protocol's Go code (plugins/sdk/proto/**.pb.go) from
# its .proto files. The generated files are committed.
proto:
	cd plugins/sdk && $(BUF) lint && $(BUF) generate

# Fail when the committed generated code differs from a fresh generation.
proto-check: proto
	git diff --exit-code -- plugins/sdk/proto
