# Install rules (`cmake --install BUILD --prefix P`): the public headers with the umbrella
# simdup/simdup.hpp, libsimdup static and shared (both archived from the component object libraries), the
# CLI, its man pages, the docs, the jieba data, a CMake package (find_package(simdup CONFIG) ->
# simdup::simdup) and simdup.pc for pkg-config. docs/install.md describes the installed tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The objects go into a shared library, so they are position independent. They also feed the
# executables: without -fno-semantic-interposition GCC would not inline one exported function
# into another (a shared library's symbols may be interposed), a cost the CLI should not pay.
foreach(component ${SIMDUP_COMPONENTS})
  set_target_properties(simdup_${component} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_compile_options(simdup_${component} PRIVATE
    $<$<CXX_COMPILER_ID:GNU,Clang>:-fno-semantic-interposition>)
endforeach()

# The installed libraries and the install rules; off by default when simdup is a subproject.
# With the libFuzzer harnesses (the asan preset) the objects carry coverage hooks, which the
# program's clang sanitizer runtime provides (as no-ops outside a fuzzer).
if(SIMDUP_TOP_LEVEL)
  set(_simdup_install_default ON)
else()
  set(_simdup_install_default OFF)
endif()
option(SIMDUP_INSTALL "Build libsimdup.a/.so and generate the install rules"
  ${_simdup_install_default})
if(NOT SIMDUP_INSTALL)
  return()
endif()

# While the major version is 0 every minor release may change the ABI, so the SONAME carries
# MAJOR.MINOR (libsimdup.so.0.1); from 1.0 on it is the major version alone.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(SIMDUP_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
else()
  set(SIMDUP_SOVERSION ${PROJECT_VERSION_MAJOR})
endif()

# What an installed library asks of a program that uses it: the public headers (they include the
# standard library only) and C++20; and, when this build is instrumented, the sanitizer's link
# flags (an ASan libsimdup needs the ASan runtime loaded first, by the program).
function(simdup_library_interface target)
  target_include_directories(${target} INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} INTERFACE cxx_std_20)
  if(SIMDUP_SANITIZE_FLAGS)
    target_link_options(${target} INTERFACE ${SIMDUP_SANITIZE_FLAGS})
  endif()
  set_target_properties(${target} PROPERTIES OUTPUT_NAME simdup)
endfunction()

# Shared: the third-party libraries stay private (DT_NEEDED entries of libsimdup.so), and
# --no-undefined makes a missing one a link error here rather than a user's load error. Not with
# clang's sanitizers: their runtime comes with the program.
add_library(simdup_shared SHARED ${SIMDUP_OBJECTS})
simdup_library_interface(simdup_shared)
get_target_property(_simdup_dep_libs simdup_deps INTERFACE_LINK_LIBRARIES)
target_link_libraries(simdup_shared PRIVATE ${_simdup_dep_libs} Threads::Threads)
target_link_options(simdup_shared PRIVATE ${SIMDUP_SANITIZE_FLAGS})
if(NOT SIMDUP_BUILD_FUZZ AND (CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR NOT SIMDUP_SANITIZE_FLAGS))
  target_link_options(simdup_shared PRIVATE LINKER:--no-undefined)
endif()
set_target_properties(simdup_shared PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${SIMDUP_SOVERSION} EXPORT_NAME simdup)

# Static: the program links the third-party libraries itself, so they are the archive's interface
# (the same list as simdup_deps; simdup-config.cmake finds them again for the static component).
add_library(simdup_static STATIC ${SIMDUP_OBJECTS})
simdup_library_interface(simdup_static)
target_link_libraries(simdup_static INTERFACE Threads::Threads ${_simdup_dep_libs})
set_target_properties(simdup_static PROPERTIES EXPORT_NAME simdup_static)

set(SIMDUP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/simdup)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/simdup
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(TARGETS simdup_shared EXPORT simdup-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# DuckDB (Parquet) is no Debian package: its libduckdb.so is installed privately, in
# LIBDIR/simdup, and the installed libsimdup and CLI find it there through their RUNPATH.
if(SIMDUP_WITH_PARQUET)
  get_filename_component(_simdup_duckdb_real ${DUCKDB_LIBRARY} REALPATH)
  install(FILES ${_simdup_duckdb_real} DESTINATION ${CMAKE_INSTALL_LIBDIR}/simdup
    RENAME libduckdb.so)
  set_target_properties(simdup_shared PROPERTIES INSTALL_RPATH "$ORIGIN/simdup")
  if(SIMDUP_BUILD_CLI)
    file(RELATIVE_PATH _simdup_bin_to_lib /${CMAKE_INSTALL_BINDIR} /${CMAKE_INSTALL_LIBDIR})
    set_target_properties(simdup_cli PROPERTIES
      INSTALL_RPATH "$ORIGIN/${_simdup_bin_to_lib}/simdup")
  endif()
endif()
install(TARGETS simdup_static EXPORT simdup-static-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT simdup-targets NAMESPACE simdup:: DESTINATION ${SIMDUP_CMAKE_DIR})
install(EXPORT simdup-static-targets NAMESPACE simdup:: DESTINATION ${SIMDUP_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/simdup-config.cmake.in
  ${PROJECT_BINARY_DIR}/simdup-config.cmake INSTALL_DESTINATION ${SIMDUP_CMAKE_DIR})
# 0.x: only the same minor version is compatible (the SONAME's promise above).
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_simdup_compat SameMinorVersion)
else()
  set(_simdup_compat SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/simdup-config-version.cmake
  COMPATIBILITY ${_simdup_compat})
install(FILES ${PROJECT_BINARY_DIR}/simdup-config.cmake
              ${PROJECT_BINARY_DIR}/simdup-config-version.cmake
  DESTINATION ${SIMDUP_CMAKE_DIR})

# simdup.pc finds its prefix from its own location (${pcfiledir}), so the same file serves
# `cmake --install --prefix P` and the .deb, which installs the tree under /usr.
file(RELATIVE_PATH SIMDUP_PC_TO_PREFIX
  /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" SIMDUP_PC_TO_PREFIX "${SIMDUP_PC_TO_PREFIX}")
list(JOIN SIMDUP_SANITIZE_FLAGS " " SIMDUP_PC_LINK_FLAGS)
configure_file(${PROJECT_SOURCE_DIR}/cmake/simdup.pc.in ${PROJECT_BINARY_DIR}/simdup.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/simdup.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
  FILES_MATCHING PATTERN "*.md" PATTERN "*.yaml" PATTERN "*.json")

# The jieba dictionaries that scripts/prepare_jieba.py converts (`make deps`); without them only
# the Chinese features are unavailable, so a tree without them still installs.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/jieba/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/simdup/jieba OPTIONAL)

if(SIMDUP_BUILD_CLI)
  install(TARGETS simdup_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

  # Man pages for simdup and each subcommand, made from the built CLI's own --help at build
  # time (scripts/make-manpages.sh runs help2man), so they cannot drift from the code.
  option(SIMDUP_BUILD_MAN "Generate the man pages with help2man" ON)
  if(SIMDUP_BUILD_MAN)
    find_program(HELP2MAN_EXECUTABLE help2man REQUIRED)
    set(_simdup_man_dir ${PROJECT_BINARY_DIR}/man)
    add_custom_command(OUTPUT ${_simdup_man_dir}/simdup.1.gz
      COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
              HELP2MAN=${HELP2MAN_EXECUTABLE}
              bash ${PROJECT_SOURCE_DIR}/scripts/make-manpages.sh
              $<TARGET_FILE:simdup_cli> ${_simdup_man_dir}
      DEPENDS simdup_cli ${PROJECT_SOURCE_DIR}/scripts/make-manpages.sh
      COMMENT "Generating man pages from simdup --help"
      VERBATIM)
    add_custom_target(simdup_man ALL DEPENDS ${_simdup_man_dir}/simdup.1.gz)
    install(DIRECTORY ${_simdup_man_dir}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
      FILES_MATCHING PATTERN "*.1.gz")
  endif()
endif()

# The systemd unit of `simdup serve`, written at install time so that its ExecStart names the
# prefix installed to (lib/systemd/system under it: /usr/lib/systemd/system in the .deb).
if(SIMDUP_BUILD_CLI)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/install-unit.cmake.in
    ${PROJECT_BINARY_DIR}/install-unit.cmake @ONLY)
  install(SCRIPT ${PROJECT_BINARY_DIR}/install-unit.cmake)
endif()
