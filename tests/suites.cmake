# Each doctest test suite of kalah_tests (the product) and of kalah_experiment_tests (the
# experiments build, tests/experiments/) is its own ctest test, named for the suite. The
# suites are read once from the test sources' TEST_SUITE("name") declarations (test_srcs and
# experiment_test_srcs, CMakeLists.txt), so a new suite needs no list here.
function(kalah_read_suites out)
  set(suites "")
  foreach(src ${ARGN})
    file(STRINGS ${src} decls REGEX "^TEST_SUITE\\(\"[a-z0-9-]+\"\\)")
    foreach(decl ${decls})
      string(REGEX REPLACE "^TEST_SUITE\\(\"([a-z0-9-]+)\"\\).*" "\\1" suite "${decl}")
      list(APPEND suites ${suite})
    endforeach()
  endforeach()
  # Re-read when a test source changes (the glob alone notices only added or removed files).
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ARGN})
  list(REMOVE_DUPLICATES suites)
  list(SORT suites)
  if(NOT suites)
    message(FATAL_ERROR "tests/suites.cmake: no TEST_SUITE(\"name\") found in ${ARGN}")
  endif()
  set(${out} ${suites} PARENT_SCOPE)
endfunction()
kalah_read_suites(KALAH_TEST_SUITES ${test_srcs})
set(KALAH_EXPERIMENT_SUITES "")
if(KALAH_BUILD_EXPERIMENTS)
  kalah_read_suites(KALAH_EXPERIMENT_SUITES ${experiment_test_srcs})
  foreach(suite ${KALAH_EXPERIMENT_SUITES})
    if(suite IN_LIST KALAH_TEST_SUITES)
      message(FATAL_ERROR "tests/suites.cmake: suite '${suite}' is declared in both test binaries")
    endif()
  endforeach()
endif()
# Labels pick what the sanitizer builds of .ci/run run (ctest -L): every suite of the
# product is labelled `asan` (run under ASan+UBSan); `tsan` only those that run threads (the
# parallel search and its shared TT, the CLI's --threads), under TSan. The experiments
# build's suites are labelled `experiments`; under TSan its parallel variants run too (plain
# lazy SMP, the older order, a team of one); under ASan none (its search is the product's
# code but for the switched branches; the ASan phase is CI's longest). Measured times:
# results/ci.md.
set(KALAH_TSAN_SUITES solver tt parallel question serve http)
if(KALAH_BUILD_EXPERIMENTS)
  list(APPEND KALAH_TSAN_SUITES parallel-experiments)
endif()
foreach(suite ${KALAH_TSAN_SUITES})
  if(NOT suite IN_LIST KALAH_TEST_SUITES AND NOT suite IN_LIST KALAH_EXPERIMENT_SUITES)
    message(FATAL_ERROR "tests/suites.cmake: KALAH_TSAN_SUITES names '${suite}', which no test declares")
  endif()
endforeach()
# A fresh clone has no ctest timing history, so ctest -j starts tests in declaration order
# and a long suite started last sets the phase's wall time. COST, the suite's seconds under
# ASan+UBSan in the last CI run (results/ci.md), makes the longest start first (the
# script tests below carry their release seconds).
set(KALAH_SUITE_COST solver=378 campaign=325 db=273 cli=138 bench=131 core=117 parallel=110
                     analysis=98)
foreach(suite ${KALAH_TEST_SUITES} ${KALAH_EXPERIMENT_SUITES})
  if(suite IN_LIST KALAH_EXPERIMENT_SUITES)
    add_test(NAME ${suite} COMMAND kalah_experiment_tests --test-suite=${suite} --no-version)
    set(labels experiments)
  else()
    add_test(NAME ${suite} COMMAND kalah_tests --test-suite=${suite} --no-version)
    set(labels asan)
  endif()
  if(suite IN_LIST KALAH_TSAN_SUITES)
    list(APPEND labels tsan)
  endif()
  set_tests_properties(${suite} PROPERTIES LABELS "${labels}")
  foreach(entry ${KALAH_SUITE_COST})
    if(entry MATCHES "^${suite}=([0-9]+)$")
      set_tests_properties(${suite} PROPERTIES COST ${CMAKE_MATCH_1})
    endif()
  endforeach()
  # Under TSan (5-15x slower) the smaller random and brute-force samples of
  # scripts/ci/tsan.sh.
  if(KALAH_SANITIZE STREQUAL "thread")
    set_tests_properties(${suite} PROPERTIES ENVIRONMENT "KALAH_TSAN_QUICK=1;KALAH_QUERIES=40")
  endif()
endforeach()
# Under TSan, also the db suite's hostile-file cases, which run the CLI's parallel search
# into a damaged block on 1-3 threads (the exception must stop the team cleanly). With
# one OpenMP thread: they build their databases with the OpenMP builder, and libgomp is
# not built with TSan, which then reports the region's stack data that libgomp's barriers
# order as races (db/builder.cpp against db/format.cpp's write_layer). The solver's team
# runs on std::thread under TSan (solver/solver.cpp, run_team), so --threads still runs
# threads; the CLI commands of these cases all give --threads.
if(KALAH_SANITIZE STREQUAL "thread")
  add_test(NAME db-threads COMMAND kalah_tests --test-suite=db --test-case=hostile* --no-version)
  set_tests_properties(db-threads PROPERTIES LABELS tsan ENVIRONMENT "OMP_NUM_THREADS=1")
  # The trust suite's cases that run threads over damaged files: 1- and 2-thread solves and
  # queries into a layer of out-of-range values or a symlink loop, and two threads probing
  # and a 2-thread search meeting a mapped twin truncated under them (the SIGBUS guard).
  add_test(NAME trust-threads
           COMMAND kalah_tests --test-suite=trust
                   "--test-case=values:*,not a file: a symlink*,mapped: a twin truncated*" --no-version)
  set_tests_properties(trust-threads PROPERTIES LABELS tsan ENVIRONMENT "OMP_NUM_THREADS=1")
endif()

# `kalah serve` (when built): its API over HTTP against the CLI's own JSON, and the page
# driven in Debian's headless chromium. Python scripts that start the built binary; the
# system python3 (/usr/bin), where Debian's python3-selenium is.
if(KALAH_SERVE)
  find_program(KALAH_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
  find_program(KALAH_PYTHON3 python3)
  if(NOT KALAH_PYTHON3)
    message(FATAL_ERROR "python3 not found: apt-get install python3 (scripts/setup.sh)")
  endif()
  add_test(NAME serve-api
           COMMAND ${KALAH_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/serve_api_test.py $<TARGET_FILE:kalah>)
  set_tests_properties(serve-api PROPERTIES LABELS "asan;tsan" TIMEOUT 600)
  # Under TSan one OpenMP thread, as db-threads above: the databases the test builds and
  # opens use libgomp, which TSan cannot follow; the server's own threads are std::threads
  # and its front end (Boost.Asio, header-only) is compiled with TSan.
  if(KALAH_SANITIZE STREQUAL "thread")
    set_tests_properties(serve-api PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=1")
  endif()
  # A mapped twin truncated under the server: that layer's positions get the documented
  # 500, every other position is still answered.
  add_test(NAME serve-damage
           COMMAND ${KALAH_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/serve_damage_test.py $<TARGET_FILE:kalah>)
  set_tests_properties(serve-damage PROPERTIES TIMEOUT 300)
  # The load test (its targets: a covered query's p99 < 1 s during 300 slowloris
  # connections, 200 hard queries and 32 multi-range clients; idle, RSS within 20% after):
  # release builds only (a sanitizer's slowdown is not the server's latency), and alone
  # (RUN_SERIAL): beside another suite's searches on two cores the latency measured is the
  # other suite's. It stops itself after 240 s at most.
  if(KALAH_SANITIZE STREQUAL "" AND NOT KALAH_FUZZ)
    add_test(NAME serve-load
             COMMAND ${KALAH_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/serve_load_test.py $<TARGET_FILE:kalah>)
    set_tests_properties(serve-load PROPERTIES RUN_SERIAL TRUE TIMEOUT 300)
  endif()
  # Exit 77 (skipped) only where no browser is installed; the message says so.
  add_test(NAME serve-browser
           COMMAND ${KALAH_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/serve_browser_test.py $<TARGET_FILE:kalah>)
  set_tests_properties(serve-browser PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 COST 99)
endif()

# Proof certificates: the independent checker's own tests (checker/test_check_certificate.py:
# its move rule against rules.md's examples and a second simulator, valid certificates of
# small boards, mutations it must reject), and the committed certificates of results/
# through it, through verify-certificate's replay, and against what their journals give
# today (tests/certificates_test.sh).
find_program(KALAH_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(KALAH_PYTHON3 python3)
if(KALAH_PYTHON3 AND KALAH_SANITIZE STREQUAL "" AND NOT KALAH_FUZZ)
  add_test(NAME certificate-checker
           COMMAND ${KALAH_PYTHON3} ${PROJECT_SOURCE_DIR}/checker/test_check_certificate.py)
  set_tests_properties(certificate-checker PROPERTIES TIMEOUT 600 COST 35)
  add_test(NAME certificates
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/certificates_test.sh $<TARGET_FILE:kalah>
                   ${KALAH_PYTHON3})
  set_tests_properties(certificates PROPERTIES TIMEOUT 300)
  # scripts/campaign/journal_positions.py and scripts/campaign/trace_costs.py on a tiny
  # campaign: every decoded bound record re-tested by query --prove, the per-pass sums
  # against the campaign's.
  add_test(NAME trace-scripts
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/trace_scripts_test.sh $<TARGET_FILE:kalah>
                   ${KALAH_PYTHON3})
  set_tests_properties(trace-scripts PROPERTIES TIMEOUT 300)
  # scripts/campaign/turn_campaigns.sh on Kalah(4,3): every first turn's value as query's, each
  # journal starting with the one it imported, a rerun adding nothing, each turn's
  # certificate read by the independent checker as the turn's value.
  add_test(NAME turn-campaigns
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/turn_campaigns_test.sh $<TARGET_FILE:kalah>
                   ${KALAH_PYTHON3})
  set_tests_properties(turn-campaigns PROPERTIES TIMEOUT 300)
endif()
# checker/plain_solver, the second solver (no code shared with kalah), against kalah query on
# random positions with and without a small database and its table, on the certificates of
# small campaigns, and on damaged layer files (tests/plain_solver_test.sh).
if(TARGET kalah_plain_solver AND KALAH_SANITIZE STREQUAL "")
  add_test(NAME plain-solver
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/plain_solver_test.sh $<TARGET_FILE:kalah>
                   $<TARGET_FILE:kalah_plain_solver>)
  set_tests_properties(plain-solver PROPERTIES TIMEOUT 600)
endif()
# checker/verify_db, the independent verifier of layer files, on small databases of both
# rules built by kalah build-db (passes), then on a layer with one entry changed, a wrong
# terminal value, two entries swapped and an index off by one (each exit 1, the checksums
# made right so the values fail), and on damaged, wrong and missing files (exit 2).
if(TARGET kalah_verify_db AND KALAH_SANITIZE STREQUAL "")
  add_test(NAME verify-db-independent
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/verify_db_test.sh $<TARGET_FILE:kalah>
                   $<TARGET_FILE:kalah_verify_db> $<TARGET_FILE:kalah_kdb_edit>)
  set_tests_properties(verify-db-independent PROPERTIES TIMEOUT 300)
endif()

# `kalah campaign` under mpirun with 1, 2 and 3 ranks, and a rank killed mid-run (exit 77,
# skipped, where mpirun or the MPI build is absent: CMakeLists.txt, KALAH_MPI). A build
# without MPI runs them with the kalah of a sibling MPI build when KALAH_MPI_BINARY names
# it (scripts/setup.sh --test builds build-mpi/ and sets it).
set(KALAH_MPI_BINARY "" CACHE FILEPATH "kalah built with KALAH_MPI, for the MPI tests of a build without it")
if(KALAH_SANITIZE STREQUAL "" AND NOT KALAH_FUZZ)
  set(kalah_mpi_kalah $<TARGET_FILE:kalah>)
  if(kalah_with_mpi)
    set(kalah_mpirun "${KALAH_MPIRUN}")
  elseif(KALAH_MPI_BINARY)
    find_program(KALAH_MPIRUN mpirun)
    set(kalah_mpi_kalah ${KALAH_MPI_BINARY})
    set(kalah_mpirun "${KALAH_MPIRUN}")
  else()
    set(kalah_mpirun no-mpi-build)
  endif()
  if(NOT kalah_mpirun)
    set(kalah_mpirun "")
  endif()
  add_test(NAME campaign-mpi
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/mpi_campaign_test.sh ${kalah_mpi_kalah} "${kalah_mpirun}")
  set_tests_properties(campaign-mpi PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 COST 34)
  # --cross-check: a lying worker (the test hook --test-lying-rank) refused, the value right;
  # without the check the lie is not found.
  add_test(NAME campaign-mpi-cross-check
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/mpi_cross_check_test.sh ${kalah_mpi_kalah} "${kalah_mpirun}")
  set_tests_properties(campaign-mpi-cross-check PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
  # verify-certificate's leaves on worker ranks: the same outcomes and nodes as in one
  # process, resumed, a false leaf refuted, --leaf-seconds refused.
  add_test(NAME verify-certificate-mpi
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/mpi_verify_certificate_test.sh ${kalah_mpi_kalah} "${kalah_mpirun}")
  set_tests_properties(verify-certificate-mpi PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
  # scripts/campaign/campaign_sim.py on the trace of a tiny campaign (two MPI workers as the
  # measured point when built with MPI); exit 77 (skipped) without python3.
  add_test(NAME campaign-sim
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/campaign_sim_test.sh ${kalah_mpi_kalah}
                   ${PROJECT_SOURCE_DIR}/scripts/campaign/campaign_sim.py "${kalah_mpirun}")
  set_tests_properties(campaign-sim PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
