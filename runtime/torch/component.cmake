# The libtorch component's targets, shared by the main build (runtime/torch/CMakeLists.txt) and
# the component built alone against an installed accel (tests/torch/standalone: scripts/torch2_smoke
# with the peers' torch 2 wheel, scripts/test-gpu with the GPU image's torch). Torch must be found.
#   accel_add_torch_component(RUNTIME FMT): accel_torch (libaccel_torch, exported as accel::torch)
#     on the runtime target RUNTIME (accel_runtime, or accel::runtime when installed) and fmt's
#     target FMT, with the precompiled libtorch header that accel_use_torch_pch gives others.
set(ACCEL_TORCH_DIR ${CMAKE_CURRENT_LIST_DIR})
get_filename_component(ACCEL_SOURCE_ROOT ${ACCEL_TORCH_DIR}/../.. ABSOLUTE)

# libtorch's headers are most of every file's compile time: parsed once into a precompiled header
# that every target built on the component reuses, made by an object library that sees exactly the
# component's interface. GCC takes one only under the code model and macros it was made with: it
# is position-independent, and so is every file that takes it, programs' too (-fPIC code is as
# good in a position-independent executable as -fPIE code).
function(accel_add_torch_pch runtime)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/torch_pch.cc "// The precompiled libtorch header's own file.\n")
  add_library(accel_torch_pch OBJECT ${CMAKE_CURRENT_BINARY_DIR}/torch_pch.cc)
  target_link_libraries(accel_torch_pch PRIVATE ${runtime} ${TORCH_LIBRARIES})
  target_compile_options(accel_torch_pch PRIVATE -ffp-contract=off)
  target_precompile_headers(accel_torch_pch PRIVATE <torch/torch.h>)
  set_target_properties(accel_torch_pch PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

function(accel_use_torch_pch target)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    target_compile_options(${target} PRIVATE -fPIC)
  else()
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON DEFINE_SYMBOL "")
  endif()
  target_precompile_headers(${target} REUSE_FROM accel_torch_pch)
  # A header GCC would not take fails the build; no fused multiply-adds the source does not ask
  # for, so the arithmetic rounds as PyTorch's does (the parity tests compare bits).
  target_compile_options(${target} PRIVATE -Winvalid-pch -ffp-contract=off)
endfunction()

function(accel_add_torch_component runtime fmt)
  accel_add_torch_pch(${runtime})
  add_library(accel_torch SHARED
    ${ACCEL_TORCH_DIR}/accelerator_state.cc
    ${ACCEL_TORCH_DIR}/autocast.cc
    ${ACCEL_TORCH_DIR}/data_loader.cc
    ${ACCEL_TORCH_DIR}/ddp.cc
    ${ACCEL_TORCH_DIR}/ddp_checks.cc
    ${ACCEL_TORCH_DIR}/distributed_sampler.cc
    ${ACCEL_TORCH_DIR}/prepared_model.cc
    ${ACCEL_TORCH_DIR}/state_export.cc
    ${ACCEL_TORCH_DIR}/tensor_view.cc
    ${ACCEL_TORCH_DIR}/torch_accelerator.cc
    ${ACCEL_TORCH_DIR}/torch_version.cc
    ${ACCEL_TORCH_DIR}/zero/gather_on_use.cc
    ${ACCEL_TORCH_DIR}/zero/shard_layout.cc
    ${ACCEL_TORCH_DIR}/zero/sharded_engine.cc
    ${ACCEL_TORCH_DIR}/zero/sharded_gradients.cc
    ${ACCEL_TORCH_DIR}/zero/sharded_state.cc
    ${ACCEL_TORCH_DIR}/zero/unit_memory.cc
    ${ACCEL_TORCH_DIR}/zero/zero_options.cc)
  # RecordFunction's layout depends on NDEBUG: its observer is compiled as libtorch was, on its
  # own (no precompiled header, no unity batch), whatever the build type.
  set_source_files_properties(${ACCEL_TORCH_DIR}/zero/gather_on_use.cc PROPERTIES
    COMPILE_DEFINITIONS NDEBUG SKIP_PRECOMPILE_HEADERS ON SKIP_UNITY_BUILD_INCLUSION ON)
  # $ORIGIN: installed, it finds libaccel_runtime beside itself (a user's RUNPATH does not reach
  # a library's own dependencies).
  # One translation unit: each file's own code is small beside the libtorch templates it
  # instantiates, many of them the same in every file.
  set_target_properties(accel_torch PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
  set_target_properties(accel_torch PROPERTIES OUTPUT_NAME accel_torch EXPORT_NAME torch
                        VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR} INSTALL_RPATH "$ORIGIN")
  target_link_libraries(accel_torch PUBLIC ${runtime} ${TORCH_LIBRARIES} PRIVATE ${fmt} nlohmann_json::nlohmann_json)
  accel_use_torch_pch(accel_torch)
  target_include_directories(accel_torch PUBLIC
    $<BUILD_INTERFACE:${ACCEL_SOURCE_ROOT}>
    $<INSTALL_INTERFACE:include/accel>)
endfunction()
