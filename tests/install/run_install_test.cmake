# Installs this build into WORK_DIR/prefix, builds tests/install/project against it, and runs
# the result under the installed `accel launch`. Fails on any step.
file(REMOVE_RECURSE ${WORK_DIR})
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test step failed (${rc}): ${ARGN}")
  endif()
endfunction()
step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/project -B ${WORK_DIR}/build -G Ninja
     -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step(${CMAKE_COMMAND} -E env HF_HOME=${WORK_DIR}/hf GLOO_SOCKET_IFNAME=lo
     ${WORK_DIR}/prefix/bin/accel launch --cpu --num_processes 2 --main_process_port 0 ${WORK_DIR}/build/hello_accel)
# The torch component, where this build has it: found with COMPONENTS torch, one DDP step.
if(WITH_TORCH)
  step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/torch_project -B ${WORK_DIR}/torch_build -G Ninja
       -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
  step(${CMAKE_COMMAND} --build ${WORK_DIR}/torch_build)
  step(${CMAKE_COMMAND} -E env HF_HOME=${WORK_DIR}/hf GLOO_SOCKET_IFNAME=lo
       ${WORK_DIR}/prefix/bin/accel launch --cpu --num_processes 2 --main_process_port 0
       ${WORK_DIR}/torch_build/hello_accel_torch)
endif()
