# Warnings and sanitizers are per target, never global flags.
function(simdup_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    -Wno-missing-field-initializers)
  if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC warns when a class in a header holds a type from an anonymous namespace; a unity build
    # includes each .cpp into one file, so every pimpl with a file-local field would warn.
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
endfunction()

if(SIMDUP_SANITIZE STREQUAL "address")
  set(SIMDUP_SANITIZE_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
      -fno-sanitize-recover=undefined)
elseif(SIMDUP_SANITIZE STREQUAL "thread")
  set(SIMDUP_SANITIZE_FLAGS -fsanitize=thread -fno-omit-frame-pointer)
elseif(NOT SIMDUP_SANITIZE STREQUAL "")
  message(FATAL_ERROR "SIMDUP_SANITIZE must be empty, address or thread")
endif()
if(SIMDUP_SANITIZE_FLAGS)
  # Applied through the deps interface so every simdup target (library, CLI, tests) agrees.
  target_compile_options(simdup_deps INTERFACE ${SIMDUP_SANITIZE_FLAGS})
  target_link_options(simdup_deps INTERFACE ${SIMDUP_SANITIZE_FLAGS})
endif()
