# One way to declare every target, so each folder's CMakeLists.txt is a few lines.
#
#   modelplane_library(core_http DEPS core_error Boost::headers)
#       a static library from the *.cc files of the current folder (not *_main.cc)
#   modelplane_executable(modelplane-operator SOURCES operator_main.cc DEPS operator)
#   modelplane_test(core_http_test DEPS core_http [LABELS cluster])
#       one GoogleTest binary from the *_test.cc files of the current folder; label "unit"
#       by default, "cluster" for tests that need the local control plane (scripts/test.sh
#       starts one for them)
#   modelplane_fuzzer(safetensors_fuzzer SOURCES x_fuzzer.cc DEPS core_safetensors)

cmake_path(GET CMAKE_CURRENT_LIST_DIR PARENT_PATH MODELPLANE_ROOT)

# ROLE is "product" (libraries and binaries) or "harness" (tests and benchmarks).
function(modelplane_apply_flags target role)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wconversion -Wno-sign-conversion
                                           # designated initializers leave defaulted members out
                                           # on purpose; GCC 12 warns about it, later GCCs do not
                                           -Wno-missing-field-initializers)
  if(MODELPLANE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # A unity source includes the .cc files, so GCC takes a class in one of them for a header's
    # and warns when it holds a type of that file's anonymous namespace; in one TU it is harmless.
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
  if(MODELPLANE_SANITIZE)
    # AddressSanitizer everywhere. UBSan instruments the product's code, which the tests drive;
    # the tests' own code goes without it, since it costs their build a third more (they are
    # half of it) and finds undefined behaviour only in code that never ships.
    if(role STREQUAL "product")
      target_compile_options(${target} PRIVATE -fsanitize=address,undefined
                                               -fno-sanitize-recover=undefined)
    else()
      target_compile_options(${target} PRIVATE -fsanitize=address)
    endif()
    target_compile_options(${target} PRIVATE -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# Adds DIR if it has a CMakeLists.txt, then searches its child folders the same way, so a new
# module folder (node-agent/store beside node-agent's own files) needs no edit anywhere else.
function(modelplane_add_subdirectories dir)
  if(NOT IS_ABSOLUTE ${dir})
    set(dir ${CMAKE_CURRENT_SOURCE_DIR}/${dir})
  endif()
  if(EXISTS ${dir}/CMakeLists.txt)
    add_subdirectory(${dir})
  endif()
  file(GLOB children LIST_DIRECTORIES true ${dir}/*)
  list(SORT children)
  foreach(child IN LISTS children)
    # Hidden folders (.venv, .cache) hold tools, not modules: a Python venv carries CMake
    # projects of its own (triton) that must not join the build.
    cmake_path(GET child FILENAME child_name)
    if(IS_DIRECTORY ${child} AND NOT child_name MATCHES "^\\.")
      modelplane_add_subdirectories(${child})
    endif()
  endforeach()
endfunction()

function(modelplane_library name)
  cmake_parse_arguments(ARG "" "" "DEPS;SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    file(GLOB ARG_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
    list(FILTER ARG_SOURCES EXCLUDE REGEX "(_main|_fuzzer)\\.cc$")
  endif()
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${MODELPLANE_ROOT})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} Threads::Threads)
  modelplane_apply_flags(${name} product)
endfunction()

function(modelplane_executable name)
  cmake_parse_arguments(ARG "" "" "DEPS;SOURCES" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  modelplane_apply_flags(${name} product)
endfunction()

function(modelplane_test name)
  cmake_parse_arguments(ARG "" "" "DEPS;SOURCES;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_SOURCES)
    file(GLOB ARG_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE MODELPLANE_SOURCE_DIR="${MODELPLANE_ROOT}"
                                             MODELPLANE_BINARY_DIR="${CMAKE_BINARY_DIR}")
  modelplane_apply_flags(${name} harness)
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${ARG_LABELS}")
endfunction()

function(modelplane_benchmark name)
  cmake_parse_arguments(ARG "" "" "DEPS;SOURCES" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  modelplane_apply_flags(${name} harness)
endfunction()

# libFuzzer needs clang; with GCC the fuzzer is skipped (scripts/fuzz.sh builds them with clang).
function(modelplane_fuzzer name)
  cmake_parse_arguments(ARG "" "" "DEPS;SOURCES" ${ARGN})
  if(NOT MODELPLANE_BUILD_FUZZERS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
endfunction()
