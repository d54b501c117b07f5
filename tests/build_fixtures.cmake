# SPDX-License-Identifier: Apache-2.0
# Builds fixtures/lists/*.txt into snapshots with urlguard-publish (a CTest fixture).
file(MAKE_DIRECTORY ${OUT})
foreach(list phishing malware)
  execute_process(COMMAND ${PUBLISH} build --list ${list} --input ${SRC}/fixtures/lists/${list}.txt
                          --out ${OUT}/${list}.ugs
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "urlguard-publish build ${list} failed: ${rc}")
  endif()
endforeach()
