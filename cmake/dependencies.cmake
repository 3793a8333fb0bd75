# Every dependency comes from a Debian package (scripts/install-deps.sh); nothing is fetched.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(simdjson REQUIRED)
find_package(TBB REQUIRED)
find_package(RocksDB REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(ZLIB REQUIRED)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
pkg_check_modules(OPENCC REQUIRED IMPORTED_TARGET opencc)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET hiredis)
# PostgreSQL source and sinks (libpqxx, and libpq itself for connection-string parsing).
pkg_check_modules(PQXX REQUIRED IMPORTED_TARGET libpqxx libpq)
find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)

pkg_get_variable(_opencc_prefix opencc prefix)
set(SIMDUP_OPENCC_DATA_DIR "${_opencc_prefix}/share/opencc" CACHE PATH "OpenCC data directory")

# One interface target that carries the third-party libraries (and sanitizer flags). RocksDB's
# shared library, not its archive (RocksDB::rocksdb), which is not position independent: the
# objects also go into libsimdup.so and the Python module (cmake/install.cmake).
add_library(simdup_deps INTERFACE)
target_link_libraries(simdup_deps INTERFACE
  simdjson::simdjson TBB::tbb RocksDB::rocksdb-shared OpenSSL::Crypto ZLIB::ZLIB
  PkgConfig::UTF8PROC PkgConfig::OPENCC PkgConfig::XXHASH PkgConfig::ZSTD PkgConfig::HIREDIS PkgConfig::PQXX)
target_include_directories(simdup_deps INTERFACE ${CLI11_INCLUDE_DIR})

# Parquet: DuckDB's C API (libduckdb.so and duckdb.h), the one dependency Debian does not
# package. scripts/install-deps.sh puts DuckDB's official build, from npm, in /opt/simdup/duckdb;
# elsewhere point SIMDUP_DUCKDB_ROOT at an unpacked libduckdb-linux-*.zip from DuckDB's releases
# (docs/install.md). Without it simdup builds and refuses .parquet inputs with a clear message.
set(SIMDUP_DUCKDB_ROOT "/opt/simdup/duckdb" CACHE PATH
  "Directory with DuckDB's include/duckdb.h and lib/libduckdb.so (or both side by side)")
find_library(DUCKDB_LIBRARY NAMES duckdb HINTS ${SIMDUP_DUCKDB_ROOT}/lib ${SIMDUP_DUCKDB_ROOT})
find_path(DUCKDB_INCLUDE_DIR duckdb.h HINTS ${SIMDUP_DUCKDB_ROOT}/include ${SIMDUP_DUCKDB_ROOT})
if(DUCKDB_LIBRARY AND DUCKDB_INCLUDE_DIR)
  set(_simdup_duckdb_found ON)
else()
  set(_simdup_duckdb_found OFF)
endif()
option(SIMDUP_WITH_PARQUET "Read and write Parquet through DuckDB's C API" ${_simdup_duckdb_found})
if(SIMDUP_WITH_PARQUET)
  if(NOT _simdup_duckdb_found)
    message(FATAL_ERROR "SIMDUP_WITH_PARQUET is ON but DuckDB was not found under "
      "SIMDUP_DUCKDB_ROOT=${SIMDUP_DUCKDB_ROOT} (libduckdb.so: ${DUCKDB_LIBRARY}, duckdb.h: "
      "${DUCKDB_INCLUDE_DIR}). Run scripts/install-deps.sh, or unpack DuckDB's "
      "libduckdb-linux-amd64.zip and pass -DSIMDUP_DUCKDB_ROOT=DIR, or -DSIMDUP_WITH_PARQUET=OFF.")
  endif()
  message(STATUS "Parquet: on, DuckDB ${DUCKDB_LIBRARY}")
  # Not linked: src/io loads libduckdb.so when Parquet is first used (src/io/parquet_duckdb.hpp),
  # by name through the binaries' RUNPATH (installed ones: the copy cmake/install.cmake puts in
  # LIBDIR/simdup), else from that installed path or the one found here. So the installed CMake
  # package needs no DuckDB look-up of its own, and commands that read no Parquet never load it.
  # Only src/io sees duckdb.h and SIMDUP_WITH_PARQUET (src/io/CMakeLists.txt): every other
  # file compiles the same with and without Parquet.
  target_link_libraries(simdup_deps INTERFACE ${CMAKE_DL_LIBS})
elseif(_simdup_duckdb_found)
  message(STATUS "Parquet: off (SIMDUP_WITH_PARQUET=OFF): .parquet inputs are refused")
else()
  message(STATUS "Parquet: off (no DuckDB under SIMDUP_DUCKDB_ROOT=${SIMDUP_DUCKDB_ROOT}; "
    "run scripts/install-deps.sh or see docs/install.md): .parquet inputs are refused")
endif()
