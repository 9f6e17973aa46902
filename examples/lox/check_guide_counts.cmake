# check_guide_counts.cmake -DTESTS=<examples/lox/tests> -DGUIDE=<docs/lox-guide.md> (test
# lox_guide_counts): the guide's count of test programs is the directory's.
file(GLOB_RECURSE programs ${TESTS}/*.lox)
list(LENGTH programs count)
file(READ ${GUIDE} guide)
if(NOT guide MATCHES "has ${count} Lox programs")
  string(REGEX MATCH "has [0-9]+ Lox programs" said "${guide}")
  message(FATAL_ERROR "docs/lox-guide.md says '${said}'; ${TESTS} has ${count}")
endif()
message(STATUS "lox guide: ${count} test programs, as it says")
