# The libtorch component's test workers, shared by tests/torch/CMakeLists.txt and the component
# built alone (tests/torch/standalone). accel_add_torch_test_workers(FMT): parity_worker and
# checks_worker on accel_torch, with fmt's target FMT: a torch 2 wheel's include folder carries
# its own fmt, ahead of Debian's, whose compiled library would not match those headers.
set(ACCEL_TORCH_TESTS_DIR ${CMAKE_CURRENT_LIST_DIR})
function(accel_add_torch_test_workers fmt)
  foreach(worker parity_worker checks_worker zero_worker)
    add_executable(${worker} ${ACCEL_TORCH_TESTS_DIR}/${worker}.cc)
    accel_use_torch_pch(${worker})
    target_link_libraries(${worker} PRIVATE accel_torch ${fmt})
  endforeach()
endfunction()
