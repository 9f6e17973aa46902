# Run GEN and compare its output with the file DOC (used to keep generated docs current).
execute_process(COMMAND ${GEN} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GEN} failed (${rc})")
endif()
file(READ ${DOC} committed)
if(NOT out STREQUAL committed)
  message(FATAL_ERROR "${DOC} is out of date: regenerate it with ${GEN} > ${DOC}")
endif()
