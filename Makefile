# apconnect — build, test, benchmark, fuzz and demo.
#
#   make demo   runs apconnect on the embedded default in a fresh dev home
#   make test   runs everything CI runs (lint, vet, race tests)
#
# Nothing here needs network access beyond the Go module proxy.

GO        ?= go
BIN       ?= bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
FUZZTIME  ?= 30s
BENCHTIME ?= 1s
GOFILES    = $(shell git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*')

.PHONY: all build plugins test test-tools lint bench fuzz demo clean conformance

all: build

# Plugins: every module under plugins/ (first-party) and examples/plugins/,
# built as wasip1 reactors into $(BIN)/plugins/<name>.wasm. Each .wasm is
# rebuilt only when its module or the guest SDK changes.
SDK_SRC         := sdk-guest/go.mod $(wildcard sdk-guest/plugin/*.go)
FIRST_PARTY     := $(patsubst plugins/%/go.mod,%,$(wildcard plugins/*/go.mod))
EXAMPLE_PLUGINS := $(patsubst examples/plugins/%/go.mod,%,$(wildcard examples/plugins/*/go.mod))
FIRST_PARTY_WASM := $(FIRST_PARTY:%=$(BIN)/plugins/%.wasm)
EXAMPLE_WASM     := $(EXAMPLE_PLUGINS:%=$(BIN)/plugins/%.wasm)
PLUGIN_BUILD     = mkdir -p $(@D) && cd $< && GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w' -o $(CURDIR)/$@ .

## build: the apconnect binary and every plugin (first-party and examples) in ./bin
build: $(FIRST_PARTY_WASM) $(EXAMPLE_WASM)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/apconnect ./cmd/apconnect

## plugins: only the plugins
plugins: $(FIRST_PARTY_WASM) $(EXAMPLE_WASM)

.SECONDEXPANSION:
$(FIRST_PARTY_WASM): $(BIN)/plugins/%.wasm: plugins/% $$(wildcard plugins/$$*/go.mod plugins/$$*/go.sum plugins/$$*/*.go) $(SDK_SRC)
	$(PLUGIN_BUILD)
$(EXAMPLE_WASM): $(BIN)/plugins/%.wasm: examples/plugins/% $$(wildcard examples/plugins/$$*/go.mod examples/plugins/$$*/go.sum examples/plugins/$$*/*.go) $(SDK_SRC)
	$(PLUGIN_BUILD)

## lint: gofmt, go vet and the generated README tool table must be clean
lint:
	@unformatted=$$(gofmt -l $(GOFILES)); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd sdk-guest && $(GO) vet ./... && GOOS=wasip1 GOARCH=wasm $(GO) vet ./...
	@set -e; for d in plugins/*/ examples/plugins/*/; do \
		[ -f $$d/go.mod ] || continue; \
		echo "GOOS=wasip1 GOARCH=wasm go vet ($$d)"; (cd $$d && GOOS=wasip1 GOARCH=wasm $(GO) vet ./...); \
	done
	$(GO) run ./host/mcpserver/internal/gendocs -check README.md

## test: everything CI needs, built from scratch
test: lint build test-tools
	$(GO) test -race -count=1 ./...
	cd sdk-guest && $(GO) test -race -count=1 ./...

# test-tools: what the tests need besides Go. wat2wasm (WABT) assembles the
# hostile-plugin corpus; the tests fail, never skip, without it.
test-tools:
	@command -v wat2wasm >/dev/null || { echo "make test needs wat2wasm from WABT (Debian/Ubuntu: apt-get install wabt; macOS: brew install wabt)"; exit 1; }

## conformance: the official MCP conformance suite (npm, installed here with
## npm ci) against apconnect serve, at MCP 2025-11-25 and 2026-07-28
CONFORMANCE_DIR := test/conformance
$(CONFORMANCE_DIR)/node_modules/.installed: $(CONFORMANCE_DIR)/package.json $(CONFORMANCE_DIR)/package-lock.json
	cd $(CONFORMANCE_DIR) && npm ci --no-audit --no-fund
	touch $@
conformance: $(CONFORMANCE_DIR)/node_modules/.installed
	$(GO) test -tags conformance -count=1 -v -run '^TestConformance$$' ./$(CONFORMANCE_DIR)/

## bench: Go benchmarks, summarized in bench/report.json
bench:
	@mkdir -p bench
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./... | $(GO) run ./test/benchreport -o bench/report.json

## fuzz: every fuzz target for FUZZTIME each
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

## demo: the main job on the embedded default, in a fresh dev home
demo: build
	@./examples/demo.sh $(BIN)/apconnect

clean:
	rm -rf $(BIN) bench/report.json
