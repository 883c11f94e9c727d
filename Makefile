# apconnect — build, test, benchmark, fuzz and demo.
#
#   make demo   runs apconnect on the embedded default in a fresh dev home
#   make test   runs lint, vet, the race tests and the Python interop suite
#
# Network: the Go module proxy; the interop suite installs its pinned Python
# packages from PyPI into test/interop/.venv, and `make interop` builds its
# cargo program from crates.io.

GO        ?= go
BIN       ?= bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
FUZZTIME  ?= 30s
# staticcheck, run from the module proxy at a pinned version (not a module
# dependency of apconnect).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
BENCHTIME ?= 1s
GOFILES    = $(shell git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*')

.PHONY: all build plugins guest-plugins guest-rust guest-c test test-tools lint bench fuzz demo clean conformance interop interop-py interop-rust goverdict browser-test

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

.SECONDEXPANSION:

## build: the apconnect binary and every plugin (first-party and examples) in ./bin
build: $(FIRST_PARTY_WASM) $(EXAMPLE_WASM) guest-plugins
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/apconnect ./cmd/apconnect

## plugins: only the plugins
plugins: $(FIRST_PARTY_WASM) $(EXAMPLE_WASM) guest-plugins

# Rust and C plugins: every crate with a src/lib.rs and every directory of
# .c files under plugins/ and examples/plugins/, built by the SDKs' scripts
# (sdk-guest/rust/build.sh, sdk-guest/c/build.sh) into $(BIN)/plugins/<dir>.wasm
# when the toolchain is installed; without it make says so and goes on,
# except under CI (CI=true or APCONNECT_REQUIRE_TOOLCHAINS=1), where that is
# an error. Packages (Debian 12): rustc libstd-rust-dev-wasm32 for Rust,
# clang lld wasi-libc libclang-rt-14-dev-wasm32 for C.
RUST_PLUGINS := $(patsubst %/src/lib.rs,%,$(wildcard plugins/*/src/lib.rs examples/plugins/*/src/lib.rs))
C_PLUGINS    := $(sort $(patsubst %/,%,$(dir $(wildcard plugins/*/*.c examples/plugins/*/*.c))))
RUST_WASM    := $(foreach d,$(RUST_PLUGINS),$(BIN)/plugins/$(notdir $(d)).wasm)
C_WASM       := $(foreach d,$(C_PLUGINS),$(BIN)/plugins/$(notdir $(d)).wasm)
RUST_SDK_SRC := sdk-guest/rust/build.sh $(wildcard sdk-guest/rust/src/*.rs)
C_SDK_SRC    := sdk-guest/c/build.sh sdk-guest/c/apconnect_plugin.c sdk-guest/c/apconnect_plugin.h
REQUIRE_TOOLCHAINS := $(if $(filter-out 0,$(APCONNECT_REQUIRE_TOOLCHAINS))$(filter true,$(CI)),yes)
export APCONNECT_RUST_SDK_CACHE ?= $(CURDIR)/$(BIN)/.rust-sdk

## guest-plugins: the Rust and C plugins, each language when its toolchain is installed
guest-plugins:
	@set -e; for lang in rust c; do \
		if msg=$$(bash sdk-guest/$$lang/build.sh --check 2>&1); then \
			$(MAKE) --no-print-directory guest-$$lang; \
		elif [ -n "$(REQUIRE_TOOLCHAINS)" ]; then \
			echo "$$msg"; echo "make: the $$lang plugins must be built here (CI or APCONNECT_REQUIRE_TOOLCHAINS)"; exit 1; \
		else \
			echo "make: skipping the $$lang plugins: $$msg"; \
		fi; \
	done
guest-rust: $(RUST_WASM)
guest-c: $(C_WASM)

$(RUST_WASM): $(BIN)/plugins/%.wasm: $$(wildcard plugins/$$*/src/*.rs examples/plugins/$$*/src/*.rs) $(RUST_SDK_SRC)
	bash sdk-guest/rust/build.sh $(firstword $(wildcard plugins/$* examples/plugins/$*)) $@
$(C_WASM): $(BIN)/plugins/%.wasm: $$(wildcard plugins/$$*/*.c plugins/$$*/*.h examples/plugins/$$*/*.c examples/plugins/$$*/*.h) $(C_SDK_SRC)
	bash sdk-guest/c/build.sh $(firstword $(wildcard plugins/$* examples/plugins/$*)) $@

$(FIRST_PARTY_WASM): $(BIN)/plugins/%.wasm: plugins/% $$(wildcard plugins/$$*/go.mod plugins/$$*/go.sum plugins/$$*/*.go) $(SDK_SRC)
	$(PLUGIN_BUILD)
$(EXAMPLE_WASM): $(BIN)/plugins/%.wasm: examples/plugins/% $$(wildcard examples/plugins/$$*/go.mod examples/plugins/$$*/go.sum examples/plugins/$$*/*.go) $(SDK_SRC)
	$(PLUGIN_BUILD)

## lint: gofmt, the house style (imports grouped standard library /
## third party / apconnect, the goimports -local apconnect order; no
## production function over 100 lines), go vet, staticcheck, go mod tidy,
## the non-unix files (every package type-checked for windows/amd64 from
## source, test/typecheck: a cross build took a minute on a cold cache) and
## the generated README tool table must be clean
lint:
	@unformatted=$$(gofmt -l $(GOFILES)); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) test -count=1 ./test/housestyle
	$(GO) vet ./...
	$(GO) vet -tags browser ./test/browser/
	cd sdk-guest && $(GO) vet ./... && GOOS=wasip1 GOARCH=wasm $(GO) vet ./...
	@set -e; for d in plugins/*/ examples/plugins/*/; do \
		[ -f $$d/go.mod ] || continue; \
		echo "GOOS=wasip1 GOARCH=wasm go vet ($$d)"; (cd $$d && GOOS=wasip1 GOARCH=wasm $(GO) vet ./...); \
	done
	$(GO) run ./host/mcpserver/internal/gendocs -check README.md
	bash -n sdk-guest/rust/build.sh && bash -n sdk-guest/c/build.sh
	$(GO) mod tidy -diff
	cd sdk-guest && $(GO) mod tidy -diff
	$(GO) run $(STATICCHECK) ./...
	cd sdk-guest && $(GO) run $(STATICCHECK) ./...
	$(GO) run ./test/typecheck -goos windows -goarch amd64 ./...

## test: everything CI needs, built from scratch, then the Python interop
## suite; prints the time each phase took at the end (also when one fails)
PHASES := $(BIN)/.make-test-phases
# $(call phase,NAME,COMMAND) runs COMMAND in a subshell and appends its
# wall time to $(PHASES); a failing phase prints the table so far and stops.
phase = echo "== make test: $(1)"; start=$$(date +%s); \
	if ( $(2) ); then printf '  %-18s %4d s\n' "$(1)" $$(( $$(date +%s) - start )) >> $(PHASES); \
	else printf '  %-18s %4d s  FAILED\n' "$(1)" $$(( $$(date +%s) - start )) >> $(PHASES); \
	echo "make test: time per phase"; cat $(PHASES); exit 1; fi
# The packages whose tests take longest, named first so that go test starts
# them first (it runs packages in the order given, GOMAXPROCS at a time, and
# prints them in that order): the rest run beside them instead of leaving
# the end-to-end tests alone on the machine at the end.
SLOW_PACKAGES := ./test/e2e ./host/plugin ./cmd/apconnect ./host/mcpserver ./host/connector/discourse
# go test runs one package more at once than there are cores: the
# end-to-end packages wait on processes and sockets much of the time
# (test/e2e alone keeps 0.9 of a core busy), and the extra package fills
# that. On 2 cores with a warm build cache, 333 s at -p 2, 288 s at -p 3.
TEST_P ?= $(shell n=$$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2); echo $$((n + 1)))
test: test-tools
	@mkdir -p $(BIN); rm -f $(PHASES); date +%s > $(PHASES).start
	@$(call phase,lint,$(MAKE) --no-print-directory lint)
	@$(call phase,build,$(MAKE) --no-print-directory build)
	@$(call phase,go test -race,$(GO) test -race -count=1 -p $(TEST_P) $(SLOW_PACKAGES) ./...)
	@$(call phase,sdk-guest tests,cd sdk-guest && $(GO) test -race -count=1 ./...)
	@$(call phase,interop-py,$(MAKE) --no-print-directory interop-py)
	@echo "make test: time per phase"; cat $(PHASES); \
	printf '  %-18s %4d s\n' total $$(( $$(date +%s) - $$(cat $(PHASES).start) ))

# The interop suite (test/interop, docs/INTEROP.md): apconnect against the
# reference SDKs agent-protocols 0.12.6, Python (pinned in requirements.txt,
# installed in a venv made here) and Rust (a cargo program, Cargo.lock
# committed). Nothing is skipped: a missing tool fails the target.
INTEROP      := test/interop
INTEROP_VENV := $(INTEROP)/.venv
INTEROP_ENV   = APCONNECT_BIN=$(CURDIR)/$(BIN)/apconnect GOVERDICT_BIN=$(CURDIR)/$(BIN)/goverdict \
                SDK_CONNECTOR_BIN=$(CURDIR)/$(INTEROP)/rust/_target/release/sdk-connector-interop
PYTEST        = $(INTEROP_ENV) $(INTEROP_VENV)/bin/python -m pytest -c $(INTEROP)/pytest.ini

$(INTEROP_VENV)/installed: $(INTEROP)/requirements.txt
	rm -rf $(INTEROP_VENV)
	python3 -m venv $(INTEROP_VENV)
	$(INTEROP_VENV)/bin/pip install --quiet --disable-pip-version-check --no-input -r $<
	touch $@

# goverdict: the Go side of the differential cases (both halves use it).
goverdict:
	$(GO) build -o $(BIN)/goverdict ./test/interop/goverdict

## interop-py: differential vectors, SDK agents against the hub, apconnect-written rooms, 0.12.6 histories
interop-py: build goverdict $(INTEROP_VENV)/installed
	$(PYTEST) $(INTEROP) --ignore=$(INTEROP)/rust

## interop-rust: the Rust SDK's LocalConnector against apconnect hub
interop-rust: build goverdict $(INTEROP_VENV)/installed
	@command -v cargo >/dev/null || { echo "interop-rust: cargo is not installed"; exit 1; }
	cd $(INTEROP)/rust && cargo build --release --locked
	$(PYTEST) $(INTEROP)/rust

## interop: the whole interop suite, Python and Rust
interop: interop-py interop-rust

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

## browser-test: the operator's live view (host/opview) in headless Chromium
## (Debian's chromium and chromium-driver; CI installs them): a hub, two agents
## and apconnect serve, every page, a live update, and the pages' screenshots
## written to docs/opview/. Not part of make test (it builds a plugin and
## drives a browser: about two minutes on two cores).
browser-test:
	$(GO) test -tags browser -count=1 -v ./test/browser/

## bench: Go benchmarks, summarized in bench/report.json and a table of
## every target (pass, MISS or not run). The verify-archive row's peer is the
## interop suite's cargo program (the Rust SDK 0.12.6), built here when cargo
## is installed; without it that row reports "not run".
bench: build
	@mkdir -p bench
	@if command -v cargo >/dev/null; then cd $(INTEROP)/rust && cargo build --profile speed-peer --locked; \
	else echo "bench: cargo is not installed; the verify-archive row will not run"; fi
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
	rm -rf $(BIN) bench/report.json $(INTEROP_VENV) $(INTEROP)/rust/_target
