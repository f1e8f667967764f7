# Remote stores: HttpStore (read-only HTTP/HTTPS), S3Store (S3-compatible object storage) and
# open_store(url), all over libcurl. Included from the top-level CMakeLists.txt after the zarrpp
# library target exists.
cmake_path(GET CMAKE_CURRENT_LIST_DIR PARENT_PATH _zarrpp_remote_root)

pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl>=7.80)

pkg_check_modules(CRYPTO REQUIRED IMPORTED_TARGET libcrypto)
pkg_check_modules(EXPAT REQUIRED IMPORTED_TARGET expat)

target_sources(zarrpp PRIVATE
  ${_zarrpp_remote_root}/src/store/remote/encoding.cpp
  ${_zarrpp_remote_root}/src/store/remote/xml.cpp
  ${_zarrpp_remote_root}/src/store/remote/http_client.cpp
  ${_zarrpp_remote_root}/src/store/remote/transport_curl.cpp
  ${_zarrpp_remote_root}/src/store/remote/byte_ranges.cpp
  ${_zarrpp_remote_root}/src/store/remote/http_store.cpp
  ${_zarrpp_remote_root}/src/store/remote/s3_responses.cpp
  ${_zarrpp_remote_root}/src/store/remote/s3_store.cpp
  ${_zarrpp_remote_root}/src/store/remote/azure_auth.cpp
  ${_zarrpp_remote_root}/src/store/remote/azure_store.cpp
  ${_zarrpp_remote_root}/src/store/remote/gcs.cpp
  ${_zarrpp_remote_root}/src/store/remote/conditional_objects.cpp
  ${_zarrpp_remote_root}/src/store/remote/object_lease.cpp
  ${_zarrpp_remote_root}/src/store/remote/object_names.cpp
  ${_zarrpp_remote_root}/src/store/url.cpp
)
target_link_libraries(zarrpp PRIVATE PkgConfig::CURL PkgConfig::CRYPTO PkgConfig::EXPAT)

# Tests against real servers the tests start themselves: nginx (HttpStore) and moto_server
# (S3Store, cross-checked with boto3). They run serially: each starts servers on free ports.
if(ZARRPP_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
  add_executable(zarrpp-remote-tests
    ${_zarrpp_remote_root}/tests/store_conformance.cpp
    ${_zarrpp_remote_root}/tests/remote/test_internals.cpp
    ${_zarrpp_remote_root}/tests/remote/test_http_nginx.cpp
    ${_zarrpp_remote_root}/tests/remote/test_http_scripted.cpp
    ${_zarrpp_remote_root}/tests/remote/test_open_store.cpp
    ${_zarrpp_remote_root}/tests/remote/test_s3.cpp
    ${_zarrpp_remote_root}/tests/remote/test_azure.cpp
    ${_zarrpp_remote_root}/tests/remote/test_gcs.cpp
    ${_zarrpp_remote_root}/tests/remote/test_faults.cpp
    ${_zarrpp_remote_root}/tests/remote/test_in_flight.cpp
    ${_zarrpp_remote_root}/tests/remote/test_transport.cpp)
  target_link_libraries(zarrpp-remote-tests PRIVATE zarrpp zarrpp_testing GTest::gtest GTest::gtest_main PkgConfig::CURL)
  # The tests also check internals (hashes, XML, URL encoding, ranges) through headers in src/store.
  target_include_directories(zarrpp-remote-tests PRIVATE ${_zarrpp_remote_root}/src ${_zarrpp_remote_root}/tests)
  target_compile_options(zarrpp-remote-tests PRIVATE ${ZARRPP_WARNINGS})
  if(TARGET zarrpp-example-distributed)
    target_compile_definitions(zarrpp-remote-tests PRIVATE ZARRPP_EXAMPLE_DISTRIBUTED="$<TARGET_FILE:zarrpp-example-distributed>")
    add_dependencies(zarrpp-remote-tests zarrpp-example-distributed)
  endif()
  if(TARGET zarrpp-cli)
    target_compile_definitions(zarrpp-remote-tests PRIVATE ZARRPP_CLI_PATH="$<TARGET_FILE:zarrpp-cli>")
    add_dependencies(zarrpp-remote-tests zarrpp-cli)
  endif()
  gtest_discover_tests(zarrpp-remote-tests DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
endif()
