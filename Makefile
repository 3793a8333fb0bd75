# Entry points. `make run` and `make test` install what they need (Debian packages), build and run.
SHELL := /bin/bash
JOBS ?= $(shell nproc)
# ccache (installed by install-deps.sh) is looked up when configuring, after deps ran; paths are
# made relative to the checkout so clones in other directories (CI) share the cache. With -g,
# ccache also hashes the working directory unless told not to: without NOHASHDIR a clone in a new
# directory missed every entry (a cold .ci/run: 22 min on 2 cores). Debug info then names the
# directory of the clone that filled an entry, which only a debugger's source lookup notices.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
CMAKE_EXTRA = $$(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
SIMDUP := build/release/cli/simdup
SAMPLE := data/sample/news.jsonl
PREFIX ?= /usr/local
# The ThreadSanitizer selection: the tests that run concurrent code on std::thread (the RocksDB
# store and its sync thread, the service's event loops and e2e runs, the online index, the
# threaded all-pairs pass, shared readers of the shingle store, segmenter and normaliser). Not
# the dedup job or the fingerprint pipeline: they run on oneTBB, and Debian's libtbb is not
# built with TSan, whose reports then come from TBB's own task hand-offs (a plain
# tbb::parallel_for already "races"); those need a TSan-instrumented oneTBB.
TSAN_TESTS := Concurrent|Threads|RocksBackend|StoreBackendContract|RocksRecords|RocksSnapshot|OnlineIndex|HttpServer|AllPairs|e2e.test_service_(api|durability|redis|client)
# Seconds per libFuzzer harness in make test's fuzz smoke run (13 harnesses, over the seed corpora).
FUZZ_SMOKE_SECONDS ?= 5

.PHONY: all deps run test test-tsan build-tsan-tests bench fuzz package install build-% configure-% format format-check clean help

all: build-release

help:
	@echo "make run        install deps, build (release), run the dedup job on the bundled sample"
	@echo "make test       install deps, build (asan preset with the fuzz harnesses, tsan), check every dependency is installed by the script,"
	@echo "                run every test, the ThreadSanitizer selection and the fuzz smoke run"
	@echo "make test-tsan  ThreadSanitizer build and the concurrency tests"
	@echo "make bench      release build and the benchmarks"
	@echo "make fuzz       clang build of the libFuzzer harnesses (fuzz/, docs/fuzzing.md)"
	@echo "make package    release build and build/release/simdup_<version>_amd64.deb (CPack)"
	@echo "make install    release build installed under PREFIX (default /usr/local)"
	@echo "make format     clang-format every C++ source"

deps:
	@bash scripts/install-deps.sh
	@/usr/bin/python3 scripts/prepare_jieba.py

configure-%: deps
	@cmake --preset $* $(CMAKE_EXTRA) >/dev/null

build-%: configure-%
	@cmake --build --preset $* -j $(JOBS)

run: build-release
	@bash scripts/run-sample.sh $(SIMDUP) $(SAMPLE)

# The asan preset (clang) also builds the libFuzzer harnesses, so the smoke run needs no third
# build of the tree; `make fuzz` is the -O2 build for campaigns.
test: build-asan build-tsan-tests
	@bash scripts/check-deps.sh build/asan
	@$(MAKE) --no-print-directory format-check
	@ctest --preset asan -j $(JOBS)
	@ctest --preset tsan -j $(JOBS) -R '$(TSAN_TESTS)'
	@FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) bash scripts/fuzz-smoke.sh build/asan

# The TSan build only needs what TSAN_TESTS runs: the CLI and the unit test files that define a
# selected test (tests/CMakeLists.txt, SIMDUP_UNIT_TEST_FILTER); no benchmarks, no Python module.
configure-tsan: deps
	@cmake --preset tsan $(CMAKE_EXTRA) -DSIMDUP_UNIT_TEST_FILTER='$(TSAN_TESTS)' >/dev/null

build-tsan-tests: configure-tsan
	@cmake --build --preset tsan -j $(JOBS) --target simdup_tests simdup_cli

test-tsan: build-tsan-tests
	@ctest --preset tsan -j $(JOBS) -R '$(TSAN_TESTS)'

bench: build-release
	@bash scripts/run-bench.sh build/release

# The harnesses land in build/fuzz/fuzz/fuzz_*; scripts/fuzz-smoke.sh runs each briefly.
fuzz: build-fuzz

package: build-release
	@cmake --build --preset release --target package

install: build-release
	@cmake --install build/release --prefix $(PREFIX)

format-check:
	@git ls-files '*.c' '*.cpp' '*.hpp' '*.h' | xargs clang-format --dry-run -Werror
	@echo "format-check: every C++ file is clang-formatted"

format:
	@git ls-files '*.cpp' '*.hpp' '*.h' | xargs clang-format -i

clean:
	rm -rf build
