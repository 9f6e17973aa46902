# The two README commands: `make run` (the main job) and `make test` (build everything, pass
# the tests). Both install missing Debian packages first (scripts/deps.sh).
JOBS ?= 2
BUILD ?= build
CMAKE_FLAGS ?=

.PHONY: all deps build run test test-release test-stress test-asan bench bench-deps clean

all: build

deps:
	@scripts/deps.sh

build: deps
	cmake -S . -B $(BUILD)/release -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD)/release -j $(JOBS)

# The main job: a realistic workload on the collector with tracing on, then the GC report
# rebuilt from the trace (exit 3 of tenure-report is a partial report: still a report).
TRACE ?= $(BUILD)/trace
run: build
	rm -rf $(TRACE)
	TENURE_TRACE=$(TRACE) $(BUILD)/release/tools/tenure-sim --threads 2
	$(BUILD)/release/tools/tenure-report/tenure-report $(TRACE) || test $$? -eq 3

# Everything CI runs: the suite in a release build (plain and with HeapVerify + GCStress),
# then the whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
test: test-release test-stress test-asan test-tsan
	@echo "make test: all test configurations passed"

test-release: build
	cd $(BUILD)/release && ctest -j $(JOBS) --output-on-failure

# The whole suite again with the heap verified around every GC and a GC forced every 500
# allocations (on smaller workloads).
test-stress: build
	cd $(BUILD)/release && TENURE_HeapVerify=1 TENURE_GCStress=500 TENURE_TEST_SCALE=0.1 \
	  ctest -j $(JOBS) --output-on-failure -E '_stress$$|install_check' -LE fuzz

test-asan: deps
	cmake -S . -B $(BUILD)/asan -DCMAKE_BUILD_TYPE=Debug -DTENURE_SANITIZE=ON -DTENURE_BUILD_BENCH=OFF -DTENURE_REPORT_HTML=OFF -DTENURE_BUILD_FUZZ=OFF $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD)/asan -j $(JOBS)
	cd $(BUILD)/asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest -j $(JOBS) --output-on-failure

# ThreadSanitizer over the code that has threads: attached mutator threads and the finalizer
# thread, the trace writer thread, several instances on several threads, lifetime services,
# profilers and the object tracker.
test-tsan: deps
	cmake -S . -B $(BUILD)/tsan -DCMAKE_BUILD_TYPE=Debug -DTENURE_TSAN=ON -DTENURE_BUILD_BENCH=OFF -DTENURE_REPORT_HTML=OFF -DTENURE_BUILD_FUZZ=OFF $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD)/tsan -j $(JOBS)
	cd $(BUILD)/tsan && TSAN_OPTIONS=halt_on_error=1 ctest -j $(JOBS) --output-on-failure -R 'threads|finalize|lifetime|handles|event|trace|two_instances|profiler|objtrack|callbacks'

# Every benchmark, tenure against the Boehm collector, malloc/free, HotSpot (Serial, Parallel,
# G1) and Mono SGen in the same run: writes bench/RESULTS.md (about 12 minutes on 2 cores; run
# it on a quiet machine). The JDK and Mono are installed for this target only (bench-deps).
bench-deps:
	@scripts/deps.sh --bench

bench: bench-deps
	$(MAKE) build
	bench/run_all.sh --bindir $(BUILD)/release/bench

clean:
	rm -rf $(BUILD)
