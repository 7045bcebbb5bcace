# Third-party libraries, all from Debian 12 packages (see docs/dependencies.md).
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED)
find_package(OpenSSL 3 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(spdlog REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(simdjson 3 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBURING REQUIRED IMPORTED_TARGET liburing)
# gRPC and protobuf for the CSI node plugin (node-agent/csi). Debian ships pkg-config files but
# no CMake package config for gRPC.
pkg_check_modules(GRPCPP REQUIRED IMPORTED_TARGET grpc++)
pkg_check_modules(PROTOBUF REQUIRED IMPORTED_TARGET protobuf)
# Where google/protobuf/*.proto live (csi.proto imports descriptor, wrappers and timestamp).
pkg_get_variable(MODELPLANE_PROTOBUF_INCLUDEDIR protobuf includedir)
find_program(MODELPLANE_PROTOC protoc REQUIRED)
find_program(MODELPLANE_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

# csi.proto comes from the Go module of the CSI spec, found (and downloaded into the Go module
# cache when missing) by scripts/csi-proto.sh. The path is cached; it is looked up again when
# the file is gone (a cleaned module cache) or the script pins another version.
set(_csi_proto_script ${CMAKE_CURRENT_LIST_DIR}/../scripts/csi-proto.sh)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_csi_proto_script})
execute_process(COMMAND ${_csi_proto_script} --version OUTPUT_VARIABLE _csi_spec_version
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
if(NOT MODELPLANE_CSI_PROTO OR NOT EXISTS "${MODELPLANE_CSI_PROTO}"
   OR NOT MODELPLANE_CSI_PROTO MATCHES "@${_csi_spec_version}/")
  execute_process(COMMAND ${_csi_proto_script} OUTPUT_VARIABLE _csi_proto
                  ERROR_VARIABLE _csi_proto_error RESULT_VARIABLE _csi_proto_result
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _csi_proto_result EQUAL 0 OR NOT EXISTS "${_csi_proto}")
    message(FATAL_ERROR "csi.proto not found: ${_csi_proto_error}")
  endif()
  set(MODELPLANE_CSI_PROTO ${_csi_proto} CACHE FILEPATH
      "csi.proto of the CSI spec Go module (scripts/csi-proto.sh)" FORCE)
endif()
message(STATUS "CSI spec ${_csi_spec_version}: ${MODELPLANE_CSI_PROTO}")
if(MODELPLANE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(MODELPLANE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
# cpprestsdk's U() macro collides with Boost headers unless this is set everywhere.
add_compile_definitions(_TURN_OFF_PLATFORM_STRING BOOST_ASIO_NO_DEPRECATED)
