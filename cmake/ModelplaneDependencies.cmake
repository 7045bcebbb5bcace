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

# The node agent's .proto files come from the Go modules that ship them, found (and downloaded
# into the Go module cache when missing) by scripts/proto-path.sh: the CSI spec's csi.proto and
# kubelet's plugin registration API. Each path is cached; it is looked up again when the file is
# gone (a cleaned module cache) or the script pins another version.
set(_proto_path_script ${CMAKE_CURRENT_LIST_DIR}/../scripts/proto-path.sh)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_proto_path_script})
function(modelplane_find_proto name variable)
  execute_process(COMMAND ${_proto_path_script} ${name} --version OUTPUT_VARIABLE _version
                  OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  if(NOT ${variable} OR NOT EXISTS "${${variable}}" OR NOT ${variable} MATCHES "@${_version}/")
    execute_process(COMMAND ${_proto_path_script} ${name} OUTPUT_VARIABLE _path
                    ERROR_VARIABLE _error RESULT_VARIABLE _result
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _result EQUAL 0 OR NOT EXISTS "${_path}")
      message(FATAL_ERROR "the ${name} proto was not found: ${_error}")
    endif()
    set(${variable} ${_path} CACHE FILEPATH "${name} proto (scripts/proto-path.sh)" FORCE)
  endif()
  message(STATUS "${name} proto ${_version}: ${${variable}}")
endfunction()
modelplane_find_proto(csi MODELPLANE_CSI_PROTO)
modelplane_find_proto(plugin-registration MODELPLANE_PLUGIN_REGISTRATION_PROTO)
if(MODELPLANE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
# cpprestsdk's U() macro collides with Boost headers unless this is set everywhere.
add_compile_definitions(_TURN_OFF_PLATFORM_STRING BOOST_ASIO_NO_DEPRECATED)
