# ctest driver for the consumer test: -DMODE=add_subdirectory|find_package|pkg_config
# -DFAILSLOW_SOURCE_DIR -DWORK_DIR -DCXX_COMPILER -DGENERATOR -DWITH_CUPTI (ON: check failslow::cupti)
cmake_minimum_required(VERSION 3.25)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(consumer_src "${FAILSLOW_SOURCE_DIR}/tests/consumer")
set(common -G "${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release)
set(components -DFAILSLOW_WITH_CUPTI=${WITH_CUPTI})  # the component the consumer links when built

if(MODE STREQUAL "add_subdirectory")
  run(${CMAKE_COMMAND} ${common} -S ${consumer_src} -B ${WORK_DIR}/build
      -DFAILSLOW_CONSUME=add_subdirectory -DFAILSLOW_SOURCE_DIR=${FAILSLOW_SOURCE_DIR} ${components})
else()
  # Install failslow alone (no tests, no examples) into a temporary prefix.
  set(prefix "${WORK_DIR}/prefix")
  # pkg-config compiles the header-only consumer: no need to build failslow::compiled there.
  set(compiled ON)
  if(MODE STREQUAL "pkg_config")
    set(compiled OFF)
  endif()
  run(${CMAKE_COMMAND} ${common} -S ${FAILSLOW_SOURCE_DIR} -B ${WORK_DIR}/failslow-build
      -DFAILSLOW_BUILD_TESTS=OFF -DFAILSLOW_BUILD_EXAMPLES=OFF -DFAILSLOW_HEADER_CHECK=OFF
      -DFAILSLOW_COMPILED=${compiled} -DCMAKE_INSTALL_PREFIX=${prefix} ${components})
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/failslow-build)  # failslow::compiled
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/failslow-build)
  foreach(f include/failslow/failslow.hpp share/cmake/failslow/failslowConfig.cmake
            share/cmake/failslow/failslowConfigVersion.cmake share/cmake/failslow/failslowTargets.cmake
            share/pkgconfig/failslow.pc)
    if(NOT EXISTS "${prefix}/${f}")
      message(FATAL_ERROR "install is missing ${f}")
    endif()
  endforeach()
  if(MODE STREQUAL "find_package")
    run(${CMAKE_COMMAND} ${common} -S ${consumer_src} -B ${WORK_DIR}/build
        -DFAILSLOW_CONSUME=find_package -DCMAKE_PREFIX_PATH=${prefix})
  else()
    find_program(PKG_CONFIG pkg-config REQUIRED)
    set(ENV{PKG_CONFIG_PATH} "${prefix}/share/pkgconfig")
    run(${PKG_CONFIG} --cflags failslow)
    string(STRIP "${last_output}" cflags)
    separate_arguments(cflags UNIX_COMMAND "${cflags}")
    file(MAKE_DIRECTORY ${WORK_DIR}/build)
    run(${CXX_COMPILER} ${cflags} ${consumer_src}/main.cpp -o ${WORK_DIR}/build/consumer)
    run(${WORK_DIR}/build/consumer)
    message(STATUS "${last_output}")
    return()
  endif()
endif()
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
message(STATUS "${last_output}")
run(${WORK_DIR}/build/consumer_compiled)
message(STATUS "${last_output}")
if(WITH_CUPTI)
  if(NOT EXISTS "${WORK_DIR}/build/consumer_cupti")
    message(FATAL_ERROR "failslow was built with CUPTI but the consumer found no failslow::cupti")
  endif()
  run(${WORK_DIR}/build/consumer_cupti)
  message(STATUS "${last_output}")
endif()
