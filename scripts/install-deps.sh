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
  clang                # base toolchain: the asan preset (make test) with its libFuzzer harnesses, make fuzz
  libclang-rt-dev      # clang's sanitizer and libFuzzer runtimes (the asan and fuzz presets)
  llvm                 # llvm-ar, llvm-nm, llvm-ranlib: the archiver and tools CMake picks for clang
  lld                  # ld.lld, the linker CMake records for clang (CMAKE_LINKER)
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
  # --- node and npm (the npm_packages below) ---
  nodejs               # npm (this script fetches npm_packages with it); node runs hyparquet-writer in tests/e2e/test_parquet*.py
)

# Libraries Debian does not package, from npm (the only other registry this project uses): one
# line each, "npm-package@version sha512-integrity target-dir what uses it". npm pack checks the
# integrity; the files land in target-dir with a SIMDUP-NPM manifest naming the package, which
# scripts/check_deps.py accepts for the files under target-dir.
npm_packages=(
  # DuckDB's shared library (the C API), x86-64 Linux: src/io/parquet_*.cpp read and write Parquet
  "@duckdb/node-bindings-linux-x64@1.4.4-r.4 sha512-jBTL/WvfwxLToFa/pVHfT6elMtltJGnc3wSuxZD9OfMltit9YUdVFS37vBFQzXMT1Z8OWjtSjMh+zPKxOwHLHA== /opt/simdup/duckdb libduckdb.so"
  # the matching C API header duckdb.h (the npm package of the same DuckDB release)
  "duckdb@1.4.4 sha512-hEJJ5hyVF0VLj3dmOLpsWrQR0b3d4Ykqtygm6iUXjHJDDnSqg/USKxcb5qvNrOhFYPgktayU6dXCtgPqcmmpog== /opt/simdup/duckdb duckdb.h"
  # tests/e2e/test_parquet*.py: an independent Parquet writer and reader (pure JavaScript)
  "hyparquet-writer@0.17.0 sha512-GZ4QeopztjSli/Sz1dSOP/TrSKtwG2ydP2yuPMxeiZnho+PCXF7x+wx8OIVtpQn8rcv559IH1EJMHnTbv0sn+Q== /opt/simdup/node hyparquet-writer"
  "hyparquet@1.31.5 sha512-KPVfaxW8xOiO2/4fjeiBfFNEXhGVw9tfcb9ha2iNZdJ3J/yBjEwIeAnTyyuhllFFTb9YO9wg0DfRAOnm6KCvBg== /opt/simdup/node hyparquet (hyparquet-writer's dependency)"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

SUDO=""
need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      echo "install-deps: need root (or sudo) to install: $*" >&2
      exit 1
    fi
  fi
}

if [ ${#missing[@]} -ne 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  need_root "${missing[@]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# npm packages: skipped when target-dir's manifest already names the same package and integrity.
# From DuckDB's packages only the files simdup uses are kept (lib/libduckdb.so, include/duckdb.h,
# the licence); JavaScript packages go to target-dir/node_modules whole.
install_npm() {  # spec integrity target
  local spec=$1 integrity=$2 target=$3 name manifest work tarball
  name=${spec%@*}
  manifest="$target/SIMDUP-NPM"
  if [ -f "$manifest" ] && grep -qxF "$spec $integrity" "$manifest"; then return 0; fi
  need_root "$spec"
  # Debian's nodejs comes without npm (its own package); NodeSource's includes it.
  command -v npm >/dev/null 2>&1 || $SUDO apt-get install -y -q --no-install-recommends npm
  echo "install-deps: installing $spec into $target" >&2
  work=$(mktemp -d)
  (cd "$work" && npm pack --silent "$spec" >/dev/null)
  tarball=$(ls "$work"/*.tgz)
  # npm pack verified the registry's integrity; check that it is the one pinned here.
  if [ "$(/usr/bin/python3 -c 'import base64, hashlib, sys
print("sha512-" + base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$tarball")" != "$integrity" ]; then
    echo "install-deps: $spec does not have the pinned integrity $integrity" >&2
    rm -rf "$work"
    exit 1
  fi
  case "$name" in
    @duckdb/node-bindings-linux-x64)
      $SUDO mkdir -p "$target/lib"
      tar -xzf "$tarball" -C "$work" package/libduckdb.so package/LICENSE
      $SUDO install -m 0644 "$work/package/libduckdb.so" "$target/lib/libduckdb.so"
      $SUDO install -m 0644 "$work/package/LICENSE" "$target/LICENSE" ;;
    duckdb)
      $SUDO mkdir -p "$target/include"
      tar -xzf "$tarball" -C "$work" package/src/duckdb/src/include/duckdb.h
      $SUDO install -m 0644 "$work/package/src/duckdb/src/include/duckdb.h" "$target/include/duckdb.h" ;;
    hyparquet | hyparquet-writer)  # a module node finds as $target/node_modules/$name
      tar -xzf "$tarball" -C "$work"
      $SUDO rm -rf "$target/node_modules/$name"
      $SUDO mkdir -p "$target/node_modules"
      $SUDO cp -r "$work/package" "$target/node_modules/$name" ;;
    *) echo "install-deps: no install rule for $name" >&2; rm -rf "$work"; exit 1 ;;
  esac
  rm -rf "$work"
  { [ -f "$manifest" ] && grep -v "^$name@" "$manifest" || true; echo "$spec $integrity"; } \
    > "$work.manifest"
  $SUDO install -m 0644 "$work.manifest" "$manifest"
  rm -f "$work.manifest"
}

for line in "${npm_packages[@]}"; do
  read -r spec integrity target _ <<<"$line"
  install_npm "$spec" "$integrity" "$target"
done
