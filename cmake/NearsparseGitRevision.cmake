# The revision the tree was configured from, for `nearsparse info` and benchmark context. Trees
# copied without .git (to a GPU machine, say) pass it in: -DNEARSPARSE_GIT_REVISION=<rev>.
set(NEARSPARSE_GIT_REVISION "" CACHE STRING "Revision to report when the tree has no .git")
if(NOT NEARSPARSE_GIT_REVISION)
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
endif()
