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

.PHONY: all build test lint bench fuzz demo clean

all: build

## build: the apconnect binary and the example plugin in ./bin
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/apconnect ./cmd/apconnect
	cd examples/plugins/hello && GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -o $(CURDIR)/$(BIN)/plugins/hello.wasm .

## lint: gofmt, go vet and the generated README tool table must be clean
lint:
	@unformatted=$$(gofmt -l $(GOFILES)); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd sdk-guest && $(GO) vet ./... && GOOS=wasip1 GOARCH=wasm $(GO) vet ./...
	$(GO) run ./host/mcpserver/internal/gendocs -check README.md

## test: everything CI needs, built from scratch
test: lint build
	$(GO) test -race -count=1 ./...
	cd sdk-guest && $(GO) test -race -count=1 ./...

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
