# CTest starts the tests of highest COST first. A fresh clone has no measured costs
# (Testing/Temporary/CTestCostData.txt), and ctest -j then started the long pytest files in
# registration order: the py.* files last, the 130 s py.test_dask_cli alone on one core at the
# end. Seconds measured under ASan, ctest -j 2 on the 2-core machine (rounded; only the order
# matters, so they need not be exact).
set(SIMDUP_TEST_COSTS
  py.test_dask=600 e2e.test_package=150 py.test_dask_cli=130 e2e.test_explain_annotate=100
  e2e.test_postgres_dedup=100 e2e.test_parquet=90 e2e.test_cli_new_user=80 py.test_parquet=70
  e2e.test_docs_examples=70 e2e.test_cli_consistency=60 e2e.test_install=60 py.test_dedup=60
  e2e.test_jieba_keywords=50 e2e.test_cli_fingerprint=45
  py.test_fingerprint=40 py.test_dask_against=120)

function(simdup_test_cost test_name)
  foreach(entry IN LISTS SIMDUP_TEST_COSTS)
    if(entry MATCHES "^(.*)=([0-9]+)$" AND CMAKE_MATCH_1 STREQUAL test_name)
      set_tests_properties(${test_name} PROPERTIES COST ${CMAKE_MATCH_2})
    endif()
  endforeach()
endfunction()
