# The simulated object store (tests/sim): zarrpp-sim runs S3Store's own request, retry,
# condition and lost-reply code against an in-process object store with seeded faults, simulated
# time and concurrent actors, checked by a model. ctest runs a fixed-seed slice of about a minute;
# `bash scripts/simulate.sh` runs it for longer (docs/reliability.md, section 11).
if(ZARRPP_BUILD_TESTS)
  add_executable(zarrpp-sim
    ${CMAKE_SOURCE_DIR}/tests/sim/main.cpp
    ${CMAKE_SOURCE_DIR}/tests/sim/simulation.cpp
    ${CMAKE_SOURCE_DIR}/tests/sim/model.cpp
    ${CMAKE_SOURCE_DIR}/tests/sim/object_server.cpp
    ${CMAKE_SOURCE_DIR}/tests/sim/fault_transport.cpp
    ${CMAKE_SOURCE_DIR}/tests/sim/zip_processes.cpp)
  target_link_libraries(zarrpp-sim PRIVATE zarrpp)
  target_include_directories(zarrpp-sim PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_compile_options(zarrpp-sim PRIVATE ${ZARRPP_WARNINGS})
  # The CI slice: fixed seeds, each variant of the server, and zip files across processes, about a
  # minute in all.
  add_test(NAME sim.slice_full COMMAND zarrpp-sim --seed 1 --seeds 4 --seconds 9 --service both --quiet)
  add_test(NAME sim.slice_no_conditional_delete
           COMMAND zarrpp-sim --seed 101 --seeds 1 --seconds 6 --variant no-conditional-delete --quiet)
  add_test(NAME sim.slice_no_conditional COMMAND zarrpp-sim --seed 201 --seeds 1 --seconds 6 --variant no-conditional --quiet)
  add_test(NAME sim.slice_zip_processes COMMAND zarrpp-sim --zip --seed 301 --seeds 1 --seconds 8)
  set_tests_properties(sim.slice_full sim.slice_no_conditional_delete sim.slice_no_conditional sim.slice_zip_processes
                       PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE PASS_REGULAR_EXPRESSION "[0-9]+ faults injected, 0 violations")
endif()
