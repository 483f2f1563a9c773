# kvlab's front door. `make test` and `make bench` install what is missing,
# build, and run; every other target is a step of those two.
BUILD      ?= build
GENERATOR  ?= Ninja
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)
# CTest's parallel level in `make test`: most tests wait on sockets and
# timeouts, so twice the cores; the tests that time something claim all but
# one slot each (tests/CMakeLists.txt), so they keep the load of -j $(JOBS).
TEST_JOBS  ?= $(shell echo $$(( 2 * $(JOBS) )))
# The tests labelled `timed` claim all but one of TEST_JOBS's slots each
# (tests/CMakeLists.txt). Among the others CTest starves them (it starts
# whatever fits a free slot) until they run one by one at the end, the
# cores half idle. So `make test` runs them in a pass of their own, two at a
# time: each still has exactly one test beside it, a timed one.
TIMED_JOBS ?= $(shell echo $$(( 2 * ($(TEST_JOBS) - 1) )))
# Runs CTest twice in one build folder: the untimed tests at TEST_JOBS, then
# the timed ones two at a time, both passes whatever the first one found
# ($(1): folder, $(2): extra label filter, e.g. -L tsan). Fails if either did.
run_ctest_passes = status=0; \
	$(3) ctest --test-dir $(1) $(2) -LE timed --output-on-failure -j $(TEST_JOBS) || status=1; \
	$(3) ctest --test-dir $(1) $(2) -L timed --output-on-failure -j $(TIMED_JOBS) || status=1; \
	exit $$status

.PHONY: all deps build test test-tsan-core test-tsan test-asan check-thread-safety clean lint

all: build

deps:
	@scripts/install-deps

# configure once, rebuild incrementally
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G $(GENERATOR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# The formatter (.clang-format) and pyflakes over every tracked file; fix C++
# with clang-format -i --style=file FILE (CONTRIBUTING "Style").
lint: deps
	scripts/lint

# The RESP fuzzers briefly, clang's thread-safety analysis, then every test of
# the normal build (its summary is the last thing printed). The concurrency
# tests under ThreadSanitizer are a target of their own, test-tsan-core, which
# CI runs after this one (.ci/run): a third build and its tests were a third
# of this target's time (CONTRIBUTING "CI and how long `make test` takes").
test: build
	$(MAKE) --no-print-directory fuzz-smoke
	$(MAKE) --no-print-directory check-thread-safety
	@# server.redis_suite_subset needs Redis's suite; offline, that test fails and says why.
	-scripts/redis-suite-fetch build-redis-suite >/dev/null
	$(call run_ctest_passes,$(BUILD),,)

build-tsan/build.ninja:
	cmake -S . -B build-tsan -G $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVLAB_SANITIZE=thread

TSAN_ENV = TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"

# What CI runs under ThreadSanitizer after `make test` (.ci/run): the tests
# labelled `tsan` — engines, server sessions and connections, client
# strategies. Run it before landing a change to concurrent code.
test-tsan-core: deps build-tsan/build.ninja
	cmake --build build-tsan -j $(JOBS) --target tsan-tests
	$(call run_ctest_passes,build-tsan,-L tsan,$(TSAN_ENV))

# The whole suite under ThreadSanitizer.
test-tsan: deps build-tsan/build.ninja
	cmake --build build-tsan -j $(JOBS)
	$(TSAN_ENV) ctest --test-dir build-tsan --output-on-failure -j $(JOBS)

build-asan/build.ninja:
	cmake -S . -B build-asan -G $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVLAB_SANITIZE=address

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer. The
# tests labelled `timed` (tests/CMakeLists.txt: a known ratio of two rates, an
# A/A at 99.9%, an open loop's schedule) run after the others, alone, with one
# retry: their statistics assume a normal build's noise, and ASan's 2-3x
# slower client and servers on a shared machine are not that. The cost: a
# memory error that shows in one try of these eight only is not reported;
# `make test` runs them once, without a retry.
ASAN_ENV = ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1"
test-asan: deps build-asan/build.ninja
	cmake --build build-asan -j $(JOBS)
	$(ASAN_ENV) ctest --test-dir build-asan --output-on-failure -j $(JOBS) -LE timed
	$(ASAN_ENV) ctest --test-dir build-asan --output-on-failure -j $(JOBS) -L timed --repeat until-pass:2

# clang's -Wthread-safety over the libraries with locks (engines, server,
# harness): a GUARDED_BY member touched without its mutex fails the build.
# Every clang build adds the flags (CMakeLists.txt), so the fuzzer's clang
# build serves: `make test` compiles the engines and the server once for
# both instead of in a clang build of their own.
check-thread-safety: deps build-fuzz/build.ninja
	cmake --build build-fuzz -j $(JOBS) --target kvlab_engines kvlab_server_core kvlab_server_net kvlab_harness

clean:
	rm -rf $(BUILD) build-tsan build-asan build-fuzz

# ---- fuzzing: libFuzzer on the RESP parser + command dispatch (tests/fuzz/) ----
# Two targets: resp_session_fuzzer (adversarial bytes) and command_fuzzer
# (RESP-valid commands with adversarial arguments, on every engine).
# clang build with ASan + UBSan of just the fuzzer (engines + server core).
# `make fuzz` runs it for FUZZ_SECONDS on build-fuzz/fuzz-corpus (seeded from
# tests/fuzz/corpus, kept between runs); crashes land in build-fuzz/fuzz-crashes/.
FUZZ_SECONDS       ?= 300
FUZZ_SMOKE_SECONDS ?= 12
.PHONY: fuzz fuzz-smoke fuzz-build

build-fuzz/build.ninja:
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -G $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DKVLAB_SANITIZE=address -DKVLAB_FUZZ=ON

fuzz-build: deps build-fuzz/build.ninja
	cmake --build build-fuzz -j $(JOBS) --target resp_session_fuzzer command_fuzzer

fuzz: fuzz-build
	tests/fuzz/run_fuzzer.sh build-fuzz $(FUZZ_SECONDS)
	tests/fuzz/run_fuzzer.sh build-fuzz $(FUZZ_SECONDS) command_fuzzer

# What `make test` runs: the real fuzzers for FUZZ_SMOKE_SECONDS each, side
# by side (each is one process on one core: on 2 cores, the executions of
# one after the other in half the time). Fails if either found a crash.
fuzz-smoke: fuzz-build
	@tests/fuzz/run_fuzzer.sh build-fuzz $(FUZZ_SMOKE_SECONDS) & resp=$$!; \
	tests/fuzz/run_fuzzer.sh build-fuzz $(FUZZ_SMOKE_SECONDS) command_fuzzer; command=$$?; \
	wait $$resp; resp=$$?; \
	test $$resp -eq 0 -a $$command -eq 0 || { echo "fuzz-smoke: a fuzzer failed" >&2; exit 1; }

# ---- performance tracking: microbenchmarks, regression gate, dashboard ----
PYTHON          ?= /usr/bin/python3
MICRO_MIN_TIME  ?= 0.2
MICRO_FILTER    ?= .
# >1 runs each benchmark that many times; the dashboard and hop table use the median.
MICRO_REPETITIONS ?= 1
.PHONY: micro regress regress-update dashboard

# Google Benchmark run: a table on the terminal, JSON in results/micro/<UTC time>.json,
# then the sharded hop's cost derived from it.
micro: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target kvlab-micro
	@mkdir -p results/micro
	@out=results/micro/$$(date -u +%Y%m%dT%H%M%SZ).json; \
	$(BUILD)/kvlab-micro --benchmark_min_time=$(MICRO_MIN_TIME) --benchmark_filter='$(MICRO_FILTER)' \
	  --benchmark_repetitions=$(MICRO_REPETITIONS) \
	  --benchmark_out=$$out --benchmark_out_format=json \
	  --benchmark_context=git_commit=$$(git rev-parse HEAD 2>/dev/null || echo unknown) && \
	PYTHONPATH=analysis $(PYTHON) -m kvlab micro $$out && echo "micro: $$out"

# Instructions per GET/SET/INCR per engine under callgrind, against results/baseline/opcost.json.
regress: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target kvlab-opcost
	PYTHONPATH=analysis $(PYTHON) -m kvlab regress --build $(BUILD)

# Rewrites the baseline on purpose (commit results/baseline/opcost.json afterwards).
regress-update: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target kvlab-opcost
	PYTHONPATH=analysis $(PYTHON) -m kvlab regress --build $(BUILD) --update

# results/dashboard/index.html from everything under results/.
dashboard:
	PYTHONPATH=analysis $(PYTHON) -m kvlab dashboard

# ---- experiments: workloads/*.toml -> results/runs/<UTC time>-<name>/ ----
BENCH ?= workloads/default.toml
KVLAB_PYTHONPATH = $(CURDIR)/analysis:$(CURDIR)/$(BUILD)/python
.PHONY: bench bench-quick notebook

# Both seeds at full size (<= 20 min on 2 cores); `make bench BENCH=workloads/X.toml`
# runs any experiment file. Prints report.md at the end.
bench: build
	PYTHONPATH=$(KVLAB_PYTHONPATH) $(PYTHON) -m kvlab run $(BENCH) --build $(BUILD)

# Both seeds scaled down (<= 3 min on 2 cores).
bench-quick:
	@$(MAKE) --no-print-directory bench BENCH=workloads/quick.toml

# Harness efficiency: kvlab-load vs redis-benchmark on redis-server, pinned to different cores.
.PHONY: bench-harness
bench-harness: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target kvlab-load
	scripts/compare_with_redis_benchmark.sh $(BUILD) 3

# Opens notebooks/analysis.ipynb in Jupyter; without the notebook server
# (Debian: jupyter-notebook), renders it headless to $(BUILD)/notebook/analysis.html.
notebook: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target kvlab-server kvlab_harness_module
	@if jupyter notebook --version >/dev/null 2>&1; then \
	  PYTHONPATH=$(KVLAB_PYTHONPATH) KVLAB_BUILD_DIR=$(CURDIR)/$(BUILD) jupyter notebook notebooks/analysis.ipynb; \
	else \
	  echo "notebook: no Jupyter notebook server (apt-get install jupyter-notebook); rendering $(BUILD)/notebook/analysis.html"; \
	  PYTHONPATH=$(KVLAB_PYTHONPATH) KVLAB_BUILD_DIR=$(CURDIR)/$(BUILD) jupyter nbconvert --to html --execute --output-dir $(BUILD)/notebook notebooks/analysis.ipynb; \
	fi

# ---- Redis's own TCL test suite against redis-server and every kvlab engine ----
# Fetched once from Debian's `redis` source package into build-redis-suite/
# (scripts/redis-suite-fetch); prints passed/total per unit and target, and the
# tests each engine fails. `make redis-suite UNITS="unit/type/incr unit/multi"
# ENGINES="single concurrent"`; exclusions: tests/redis_suite/excluded.txt.
UNITS   ?=
ENGINES ?=
.PHONY: redis-suite redis-suite-fetch

redis-suite-fetch:
	scripts/redis-suite-fetch build-redis-suite

redis-suite: deps $(BUILD)/build.ninja redis-suite-fetch
	cmake --build $(BUILD) -j $(JOBS) --target kvlab-server
	scripts/redis-suite --build $(BUILD) $(if $(strip $(UNITS)),--units "$(UNITS)") \
	  $(if $(strip $(ENGINES)),--targets "redis $(ENGINES)")
