# nexus — build, install, test.
GO        ?= go
BIN       ?= bin
PREFIX    ?= $(shell $(GO) env GOPATH)
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
# The nexus-core distribution `make run` and `make bench` use; empty means the
# one built into nexus (third_party/nexus-core, docs/distribution.md).
CORE      ?=
# The Node peer `make bench` compares against (optional: used when present; needs Node.js 20+).
PEER      ?= $(abspath $(wildcard ../shared/peers/claude-nexus-0.27.0/bridge/mcp-server.cjs))

.PHONY: all build install run test stress test-short lint vet fmt bench bench-all fuzz e2e

all: build

# A static binary (no cgo) starts faster: no dynamic loader on every hook call.
# nexus-plugins, the plugin host (gRPC), is installed next to nexus.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/nexus ./cmd/nexus
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/nexus-plugins ./cmd/nexus-plugins

install:
	CGO_ENABLED=0 $(GO) install -trimpath -ldflags '$(LDFLAGS)' ./cmd/nexus ./cmd/nexus-plugins

# The main job: validate the distribution and run the conformance suite
# (46 cases: tool, lifecycle and scenario fixtures).
run: install
	$(PREFIX)/bin/nexus version
	$(PREFIX)/bin/nexus validate $(if $(CORE),--core $(CORE))
	$(PREFIX)/bin/nexus conformance $(if $(CORE),--core $(CORE))

# The parser fuzz targets the hardening issue names, run briefly on every
# `make test` (FUZZ_SMOKE each); `make fuzz` runs every target for FUZZTIME.
# The smoke proves each target still builds and runs under the fuzzing engine
# and tries tens of thousands of fresh inputs (a 2-core machine); the seed
# corpus and every saved crasher are replayed by the race suite itself on every
# run. Searching longer is make fuzz's job.
FUZZ_CI  ?= ./harness/tags ./conformance/assertion ./harness/host/claude ./harness/host/neutral ./harness/host/codex ./harness/applypatch ./harness/host/opencode \
	./plugins/decisions/decision ./plugins/decisions/store ./vocabulary:FuzzManifest ./harness/pluginhost:FuzzParseManifest \
	./harness/mcpserver:FuzzReadBoundedLine ./harness/mcpserver:FuzzPeekID ./internal/jsonscan ./harness:FuzzParseDecimal \
	./internal/state:FuzzDecodeEditedFile ./internal/state:FuzzReadHistorySince
FUZZTIME ?= 10s
FUZZ_SMOKE ?= 1s

# The Go modules of this repository: nexus, the plugin SDK (a module of its own,
# published as github.com/nexus-harness/nexus/plugins/sdk) and the example plugin.
# `./...` at the root stops at a nested go.mod, so vet, test and lint visit each.
MODULES  := . plugins/sdk examples/plugins/shellguard
each_module = for m in $(MODULES); do (cd $$m && $(1)) || exit 1; done

# make test: vet, the race suite, the fuzz smoke (docs/performance.md, "The test
# suite", has the timings). vet runs with -race so that it and the race suite
# share one compilation (vet needs every import compiled; plain vet compiled the
# repository a second time, without the race detector); go test's own vet pass,
# a subset of the same analyzers, is then off. Test binaries link without DWARF
# (-ldflags=-w; race reports and panics still name file:line). GORACE: a race
# build that exits with goroutines alive sleeps atexit_sleep_ms, 1 s by default,
# so they get one more second to race; every test binary and every helper
# process the tests start from one paid it. A race is reported when it happens
# either way, fails the test that saw it and makes the process exit 66;
# `make stress` keeps the 1 s wait.
TEST_GORACE ?= atexit_sleep_ms=0

test:
	$(call each_module,$(GO) vet -race ./...)
	$(call each_module,GORACE='$(TEST_GORACE)' $(GO) test -race -vet=off -ldflags=-w -timeout 20m ./...)
	FUZZTIME=$(FUZZ_SMOKE) GO=$(GO) scripts/fuzz.sh $(FUZZ_CI)

# The long run, for before a release or after touching state writes: the race
# suite with the race runtime's own exit wait and STRESS_SCALE times the crash
# scenarios' kills (NEXUS_CRASH_SCALE, internal/crashtest).
STRESS_SCALE ?= 5

stress:
	$(call each_module,NEXUS_CRASH_SCALE=$(STRESS_SCALE) $(GO) test -race -count=1 -timeout 60m ./...)

# Every fuzz target for FUZZTIME each; crashers land in <pkg>/testdata/fuzz/.
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) scripts/fuzz.sh

# End-to-end checks with real clients (Claude Code, the MCP SDKs, a second-language
# plugin), installed pinned from the registries: scripts/e2e/run.sh.
e2e:
	GO=$(GO) scripts/e2e/run.sh

test-short:
	$(call each_module,$(GO) test -short ./...)

fmt:
	gofmt -w $$(git ls-files '*.go')

# vet, gofmt, the layering rules of docs/architecture.md (scripts/check-layering.sh)
# and staticcheck (pinned; run through the Go module proxy). A finding that must
# stay (a message matching Nauro's text byte for byte) carries a //lint:ignore
# CHECK reason line where it stands. The e2e tag brings the end-to-end tests
# (make e2e) under the same checks.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	GO=$(GO) scripts/check-layering.sh
	$(call each_module,$(STATICCHECK) -tags e2e ./...)

vet:
	$(call each_module,$(GO) vet ./...)

# One table of the performance figures the issues set: median, target,
# PASS/MISS and the command behind each (docs/performance.md).
bench:
	$(GO) run ./scripts/benchtable $(if $(CORE),-core $(CORE)) $(if $(PEER),-peer $(PEER))

# Every Go benchmark of the module, raw.
bench-all:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Plugin protocol: regenerate the Go code (plugins/sdk/proto/**.pb.go, committed)
# from its .proto with buf, protoc-gen-go and protoc-gen-go-grpc, all run through
# the Go module proxy at pinned versions (see plugins/sdk/buf.gen.yaml).
BUF ?= $(GO) run github.com/bufbuild/buf/cmd/buf@v1.75.0

.PHONY: proto proto-check

proto:
	cd plugins/sdk && $(BUF) lint && $(BUF) generate

# Fail when the committed generated code differs from a fresh generation.
proto-check: proto
	git diff --exit-code -- plugins/sdk/proto
