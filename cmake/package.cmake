# `make package`: CPack writes build/release/simdup_<version>_amd64.deb from this build tree's
# install rules (cmake/install.cmake): the CLI, libsimdup, headers, CMake and pkg-config files, man
# pages, docs, the jieba data and the systemd unit of `simdup serve`. Depends is computed from the
# binaries by dpkg-shlibdeps; the maintainer scripts (cmake/debian/) create the `simdup` user.
if(NOT SIMDUP_INSTALL)
  return()
endif()

set(SIMDUP_DEB_MAINTAINER "simdup maintainers <maintainers@users.noreply.a-seed-f484ea88.example>"
  CACHE STRING "Maintainer field of the .deb")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME simdup)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "near-duplicate text detection with SimHash")
set(CPACK_PACKAGE_DESCRIPTION
"simdup finds near-duplicate documents with 64-bit SimHash fingerprints and a
permuted-table Hamming index. It includes the `simdup` command-line tool (batch
dedup of JSONL, CSV, TSV, text and WARC/WET files, fingerprints, pairs, clusters),
the `simdup serve` HTTP service with a systemd unit (loopback by default, data
under /var/lib/simdup), Chinese segmentation compatible with jieba, and the
libsimdup C++ library with its headers, CMake package and pkg-config file.")
set(CPACK_PACKAGE_CONTACT "${SIMDUP_DEB_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Install into the staging root through DESTDIR with CMAKE_INSTALL_PREFIX=/usr, so files written
# by install scripts (the systemd unit) carry the paths they will have on the target system.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)  # what dpkg-deb uses by default

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # simdup_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${SIMDUP_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION text)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Libraries from the binaries' DT_NEEDED entries; adduser for the postinst.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libduckdb.so (Parquet) ships inside the package, in <libdir>/simdup (cmake/install.cmake):
# dpkg-shlibdeps finds it there and needs no other package for it.
if(SIMDUP_WITH_PARQUET)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS
    "${CMAKE_BINARY_DIR}/_CPack_Packages/Linux/DEB/${CPACK_PACKAGE_NAME}-${CPACK_PACKAGE_VERSION}-Linux/usr/${CMAKE_INSTALL_LIBDIR}/simdup")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
# A shlibs file, so packages built against libsimdup depend on this version of it.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY "=")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/cmake/debian/postinst
  ${PROJECT_SOURCE_DIR}/cmake/debian/prerm
  ${PROJECT_SOURCE_DIR}/cmake/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
