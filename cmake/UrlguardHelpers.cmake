# SPDX-License-Identifier: Apache-2.0
# urlguard_folder(TARGET FOLDER DEPS...): FOLDER's production sources (FOLDER/*.cc without tests, fuzzers,
# benchmarks and the test-support sources named in URLGUARD_TEST_SUPPORT_SOURCES, which go to urlguard_test_support
# only) as the object library TARGET_objects and the static library TARGET built from those objects. DEPS (the
# folders below, as their static libraries, and packages) are TARGET's public link dependencies and give the
# objects their usage requirements. liburlguard.so is composed of the client folders' object libraries.
function(urlguard_folder target folder)
  file(GLOB _srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${folder}/*.cc)
  list(FILTER _srcs EXCLUDE REGEX "_(test|fuzz|bench)\\.cc$")
  if(URLGUARD_TEST_SUPPORT_SOURCES)
    list(REMOVE_ITEM _srcs ${URLGUARD_TEST_SUPPORT_SOURCES})
  endif()
  add_library(${target}_objects OBJECT ${_srcs})
  target_include_directories(${target}_objects PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(${target}_objects PRIVATE ${URLGUARD_WARNINGS})
  target_compile_definitions(${target}_objects PRIVATE URLGUARD_BUILDING_LIBRARY=1)
  add_library(${target} STATIC $<TARGET_OBJECTS:${target}_objects>)
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  if(ARGN)
    target_link_libraries(${target}_objects PUBLIC ${ARGN})
    target_link_libraries(${target} PUBLIC ${ARGN})
  endif()
endfunction()

# The longest tests' seconds in CI's ASan stage (ctest -j2; .ci/run at 356a983). On a fresh clone ctest has no
# timing history, so without a COST it starts tests in name order and a 4-minute test that comes last sets the
# stage's tail while the other core idles; with one it starts the costliest first.
set(URLGUARD_TEST_COSTS
    checkpoint_kill_test=235 publish_concurrency_test=136 publish_publisher_test=91 client_render_test=61
    client_e2e_test=47 daemon_test=37 updater_test=36 fleet_pg_test=36 feed_update_test=34 fleet_test=24)

# urlguard_add_test(NAME SOURCES... LIBS...): one GoogleTest executable registered with CTest. Tests find
# fixtures through URLGUARD_SOURCE_DIR and write scratch files under URLGUARD_TEST_TMPDIR.
function(urlguard_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_compile_options(${name} PRIVATE ${URLGUARD_WARNINGS})
  target_compile_definitions(${name} PRIVATE URLGUARD_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                             URLGUARD_BINARY_DIR="${PROJECT_BINARY_DIR}")
  target_link_libraries(${name} PRIVATE ${T_LIBS} urlguard_test_support GTest::gtest GTest::gmock
                        GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "URLGUARD_TEST_TMPDIR=${PROJECT_BINARY_DIR}/testtmp")
  foreach(_cost ${URLGUARD_TEST_COSTS})
    if(_cost MATCHES "^${name}=([0-9]+)$")
      set_tests_properties(${name} PROPERTIES COST ${CMAKE_MATCH_1})
    endif()
  endforeach()
endfunction()

# urlguard_layer_tests(FOLDER LIBS...): every FOLDER/*_test.cc becomes its own test.
function(urlguard_layer_tests folder)
  file(GLOB _tests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${folder}/*_test.cc)
  foreach(_t ${_tests})
    get_filename_component(_name ${_t} NAME_WE)
    urlguard_add_test(${folder}_${_name} SOURCES ${_t} LIBS ${ARGN})
  endforeach()
endfunction()
