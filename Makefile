# kvlab's front door. `make test` and `make bench` install what is missing,
# build, and run; every other target is a step of those two.
BUILD      ?= build
GENERATOR  ?= Ninja
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)

.PHONY: all deps build test test-unit test-tsan test-asan clean

all: build

deps:
	@scripts/install-deps

# configure once, rebuild incrementally
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G $(GENERATOR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# Every test of the normal build, then the concurrency tests under TSan.
test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory test-tsan

build-tsan/build.ninja:
	cmake -S . -B build-tsan -G $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVLAB_SANITIZE=thread

# Tests labelled `tsan` (engines, server, client strategies) under ThreadSanitizer.
test-tsan: deps build-tsan/build.ninja
	cmake --build build-tsan -j $(JOBS) --target tsan-tests
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --test-dir build-tsan -L tsan --output-on-failure -j $(JOBS)

build-asan/build.ninja:
	cmake -S . -B build-asan -G $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVLAB_SANITIZE=address

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps build-asan/build.ninja
	cmake --build build-asan -j $(JOBS)
	ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1" ctest --test-dir build-asan --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) build-tsan build-asan
