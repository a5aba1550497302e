# Plumb — the two commands (`make run`, `make test`) and their helpers.
#
# Each target installs what it needs on a fresh Debian 12 machine (Debian packages through
# tools/scripts/install-deps.sh, Python test clients into .venv), then builds and runs.
# Swift itself is expected at /opt/swift (or on PATH).

SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)
SWIFT ?= swift
JOBS ?= $(shell nproc)

.PHONY: all deps build test run format lint clean check-swift

all: build

check-swift:
	@command -v $(SWIFT) >/dev/null 2>&1 || { echo "plumb: no Swift toolchain: install Swift 6 (swift.org) to /opt/swift or put swift on PATH" >&2; exit 1; }

deps: check-swift
	@tools/scripts/install-deps.sh

# Builds everything, tests included, and fails on any compiler warning.
build: deps
	@set -o pipefail; $(SWIFT) build --build-tests -j $(JOBS) 2>&1 | tee .build-log.txt | grep -vE '^\[[0-9]+/[0-9]+\]' || { cat .build-log.txt; exit 1; }
	@if grep -E '(^|: )warning: ' .build-log.txt | grep -v 'dlopen' ; then echo "plumb: the build has warnings (see above); the project keeps zero" >&2; exit 1; fi
	@rm -f .build-log.txt

test: build
	$(SWIFT) test --skip-build --parallel -j $(JOBS)

run: build
	@echo "plumb: (the firmware loop arrives with issue 5)"

format: check-swift
	$(SWIFT) format --in-place --recursive Package.swift HAL Sources Tests tools

lint: check-swift
	$(SWIFT) format lint --strict --recursive Package.swift HAL Sources Tests tools

clean:
	rm -rf .build .venv
