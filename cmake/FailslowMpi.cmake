# ctest entries that run a program under mpiexec (FAILSLOW_WITH_MPI): failslow_add_mpi_test(
#   NAME name PROCESSES n COMMAND target args...). On one machine the processes outnumber the
# cores (Open MPI: --oversubscribe), and CI runs as root (Open MPI refuses unless told).
function(failslow_add_mpi_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;PROCESSES" "COMMAND")
  if(NOT DEFINED FAILSLOW_MPI_IS_OPEN_MPI)
    execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _version ERROR_QUIET)
    if(_version MATCHES "Open MPI|OpenRTE")
      set(FAILSLOW_MPI_IS_OPEN_MPI TRUE CACHE INTERNAL "mpiexec is Open MPI's")
    else()
      set(FAILSLOW_MPI_IS_OPEN_MPI FALSE CACHE INTERNAL "mpiexec is Open MPI's")
    endif()
  endif()
  set(_flags ${MPIEXEC_PREFLAGS})
  if(FAILSLOW_MPI_IS_OPEN_MPI)
    list(APPEND _flags --oversubscribe)
  endif()
  list(POP_FRONT arg_COMMAND _target)
  add_test(NAME ${arg_NAME}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${arg_PROCESSES} ${_flags}
                   $<TARGET_FILE:${_target}> ${MPIEXEC_POSTFLAGS} ${arg_COMMAND})
  # LeakSanitizer off: Open MPI's plugins, dlclosed at MPI_Finalize, leave allocations whose
  # stacks name no module ("<unknown module>"), which no suppression can match; ASan's other
  # checks stay on.
  set(_env "ASAN_OPTIONS=detect_leaks=0")
  if(FAILSLOW_MPI_IS_OPEN_MPI)
    list(APPEND _env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
  endif()
  set_tests_properties(${arg_NAME} PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS ${arg_PROCESSES} ENVIRONMENT "${_env}")
endfunction()
