# Runs the nearsparse program on tiny Matrix Market files this script writes, for the app.*_file
# tests: cmake -DPROGRAM=<nearsparse> -DDIR=<work dir> -DARGS=<args;...> [-DOUTPUT=<file>]
# [-DEXPECT_FAIL=ON] -P io_test.cmake. Prints the program's output and then the output file, for
# the test's PASS_REGULAR_EXPRESSION.
file(MAKE_DIRECTORY "${DIR}")
# A = [2 1; 0 3], so A A = [4 5; 0 9].
file(WRITE "${DIR}/a.mtx" "%%MatrixMarket matrix coordinate real general\n% a test matrix\n2 2 3\n1 1 2\n1 2 1\n2 2 3\n")
file(WRITE "${DIR}/b.mtx" "%%MatrixMarket matrix array real general\n2 1\n1\n-1\n")
file(WRITE "${DIR}/c.mtx" "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n")
# A 1-D chain (tridiagonal, real symmetric) and a complex Hermitian one.
file(WRITE "${DIR}/h.mtx" "%%MatrixMarket matrix coordinate real symmetric\n6 6 11\n1 1 0.5\n2 1 -1\n2 2 0\n3 2 -1\n3 3 0.5\n4 3 -1\n4 4 0\n5 4 -1\n5 5 0.5\n6 5 -1\n6 6 0\n")
file(WRITE "${DIR}/hc.mtx" "%%MatrixMarket matrix coordinate complex hermitian\n4 4 7\n1 1 1 0\n2 1 0 -1\n2 2 0 0\n3 2 0 -1\n3 3 -1 0\n4 3 0 -1\n4 4 0 0\n")
file(WRITE "${DIR}/bad.mtx" "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 2\n1 x 1\n")
if(EXISTS "${DIR}/${OUTPUT}")
  file(REMOVE "${DIR}/${OUTPUT}")
endif()
execute_process(COMMAND "${PROGRAM}" ${ARGS} WORKING_DIRECTORY "${DIR}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(OUTPUT)
  if(NOT EXISTS "${DIR}/${OUTPUT}")
    message(FATAL_ERROR "no output file ${OUTPUT}")
  endif()
  file(READ "${DIR}/${OUTPUT}" text)
  message("OUTPUT FILE:\n${text}")
endif()
if(EXPECT_FAIL AND rc EQUAL 0)
  message(FATAL_ERROR "the program succeeded; a failure was expected")
elseif(NOT EXPECT_FAIL AND NOT rc EQUAL 0)
  message(FATAL_ERROR "the program failed with ${rc}")
endif()
