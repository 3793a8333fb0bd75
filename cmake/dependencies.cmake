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
