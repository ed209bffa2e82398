# Each doctest test suite of kalah_tests is its own ctest test (name: the suite).
# A test file declares its suite with TEST_SUITE("name"); add the name here.
set(KALAH_TEST_SUITES
  core
  notation
  cli
  db
  solver
  analysis
  bench
  parallel
)
foreach(suite ${KALAH_TEST_SUITES})
  add_test(NAME ${suite} COMMAND kalah_tests --test-suite=${suite} --no-version)
endforeach()
