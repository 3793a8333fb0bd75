# Writes CTEST_FILE: one CTest entry per GoogleTest suite of TEST_EXECUTABLE (run with -P after
# the binary is linked, by simdup_add_gtest_suites in tests/CMakeLists.txt). A suite runs in one
# process with --gtest_filter=SUITE.*, as the binary runs them all by hand.
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
  OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE result TIMEOUT 60)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${result}):\n${errors}")
endif()
# Suite lines start at the line's beginning and end with '.', maybe followed by a comment such
# as "  # TypeParam = int"; the tests below them are indented.
string(REGEX MATCHALL "\n[^ \n]+\\.( |\n)" suite_lines "\n${listing}\n")
set(content "")
set(count 0)
foreach(line IN LISTS suite_lines)
  string(REGEX REPLACE "^\n([^ \n]+)\\.[ \n]$" "\\1" suite "${line}")
  string(APPEND content
    "add_test([==[${suite}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==]"
    ")\n"
    "set_tests_properties([==[${suite}]==] PROPERTIES TIMEOUT ${SUITE_TIMEOUT}"
    " WORKING_DIRECTORY [==[${WORKING_DIRECTORY}]==])\n")
  math(EXPR count "${count} + 1")
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests named no suite:\n${listing}")
endif()
file(WRITE "${CTEST_FILE}" "${content}")
