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
endfunction()

# urlguard_layer_tests(FOLDER LIBS...): every FOLDER/*_test.cc becomes its own test.
function(urlguard_layer_tests folder)
  file(GLOB _tests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${folder}/*_test.cc)
  foreach(_t ${_tests})
    get_filename_component(_name ${_t} NAME_WE)
    urlguard_add_test(${folder}_${_name} SOURCES ${_t} LIBS ${ARGN})
  endforeach()
endfunction()
