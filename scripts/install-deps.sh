#!/usr/bin/env bash
# Installs simdup's build and test dependencies from Debian packages.
# Idempotent: packages already present are not touched, and apt-get runs only when one is missing.
# Every package carries a comment saying what uses it; scripts/check-deps.sh fails the tests when
# the build or the tests use a Debian package that is not named here.
set -euo pipefail

packages=(
  # --- base toolchain (check-deps.sh treats these as given: compiler, libc, libstdc++, make) ---
  build-essential      # base toolchain: gcc/g++, libc6-dev, libstdc++-dev, make (every C++ file)
  cmake                # base toolchain: configure, CTest, CPack (every build)
  ninja-build          # base toolchain: the presets' generator
  pkg-config           # base toolchain: cmake/dependencies.cmake's pkg_check_modules
  git                  # base toolchain: clone, and the docs-examples test lists tracked files
  clang                # base toolchain: libFuzzer harnesses (make fuzz) and the fuzz smoke run
  clang-format         # make format and the formatting check in make test
  ccache               # optional compiler cache picked up by the Makefile (faster rebuilds)
  # --- C++ libraries (headers and link lines of libsimdup, the CLI, tests, benchmarks) ---
  libgtest-dev         # tests/unit: GoogleTest
  libgmock-dev         # tests/unit: GoogleMock matchers
  libbenchmark-dev     # bench/micro: Google Benchmark
  libutf8proc-dev      # src/text: NFKC, case folding, Unicode categories
  libopencc-dev        # src/text/t2s.cpp: traditional to simplified Chinese
  opencc               # src/text/t2s.cpp: OpenCC's conversion data files (t2s.json); the opencc program makes the Scrapy test's traditional copies
  libxxhash-dev        # src/features: xxh3-64 feature hashes
  libssl-dev           # src/features/md5.cpp: OpenSSL MD5 for compat=python-simhash
  libsimdjson-dev      # src/io: JSONL parsing
  nlohmann-json3-dev   # src/service, cli: JSON documents (summary, stats)
  libcli11-dev         # cli/: option parsing and help
  libtbb-dev           # src/dedup, src/index: parallel sorts and pipelines
  zlib1g-dev           # src/io: .gz inputs
  libzstd-dev          # src/io: .zst inputs
  librocksdb-dev       # src/store: the service's embedded store
  libhiredis-dev       # src/store/redis_backend.cpp: the shared Redis store
  pybind11-dev         # python/: the simdup._core extension module
  python3-dev          # python/: Python.h for the extension module
  # --- programs the tests and tools run ---
  zstd                 # tests/e2e: writes .zst inputs for the reader tests
  xxhash               # tests/e2e: xxhsum as an independent xxh3 reference
  redis-server         # tests/e2e/test_service_redis.py: a real Redis on loopback
  curl                 # tests/e2e/test_docs_examples.py: runs the curl examples of README and docs/service.md
  postgresql           # tests: a real PostgreSQL started by the tests (initdb, pg_ctl)
  libpqxx-dev          # src/io: PostgreSQL source and sinks
  chromium             # tests/e2e/test_dedup_report.py: renders report.html headless
  manpages-zh          # tests/e2e, scripts/make_sample.py: Chinese man pages as real corpus text
  # --- packaging (cmake/install.cmake, cmake/package.cmake: make package, cmake --install) ---
  help2man             # scripts/make-manpages.sh: the man pages, from the CLI's own --help
  dpkg-dev             # make package: dpkg-shlibdeps computes the .deb's Depends
  file                 # make package: CPack finds the ELF files to hand to dpkg-shlibdeps
  systemd              # tests/e2e/test_package.py: systemd-analyze verify of the packaged unit
  # --- Python (always /usr/bin/python3) ---
  python3              # tests/e2e, tests/python, eval/: the test and evaluation scripts
  python3-pytest       # tests/e2e, tests/python: the test runner
  python3-pyflakes     # tests: the lint.python test (unused imports and names, undefined names)
  python3-psycopg2     # tests/e2e/test_postgres_*.py: loads and checks the test PostgreSQL
  python3-numpy        # python/: zero-copy uint64 arrays; tests/python
  python3-pandas       # python/: dedup results as DataFrames; simdup.dask
  python3-jieba        # scripts/prepare_jieba.py (dictionaries), tests: jieba reference output
  python3-dask         # python/simdup/dask: distributed dedup
  python3-distributed  # python/simdup/dask: LocalCluster with worker processes in the tests
  python3-scrapy       # python/simdup/scrapy: the item pipeline and its crawl test
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
