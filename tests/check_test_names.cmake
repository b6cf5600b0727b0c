# ctest registers one test per doctest case by name; CMake splits a name at ';', and the pieces
# then match no test case and "pass" without running anything. Refuse such names.
execute_process(COMMAND ${TEST_BINARY} --list-test-cases --no-intro=true --no-version=true
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cannot list the test cases of ${TEST_BINARY}")
endif()
string(FIND "${listing}" ";" semicolon)
if(NOT semicolon EQUAL -1)
  message(FATAL_ERROR "a test case name contains ';' (CMake would split it into tests that run nothing)")
endif()
