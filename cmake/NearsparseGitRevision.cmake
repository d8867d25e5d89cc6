# The revision the tree was configured from, for `nearsparse info` and benchmark context.
set(NEARSPARSE_GIT_REVISION "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${PROJECT_SOURCE_DIR}/.git")
  execute_process(
    COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --abbrev=12
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    OUTPUT_VARIABLE _nearsparse_rev
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _nearsparse_rev_status)
  if(_nearsparse_rev_status EQUAL 0 AND _nearsparse_rev)
    set(NEARSPARSE_GIT_REVISION "${_nearsparse_rev}")
  endif()
endif()
