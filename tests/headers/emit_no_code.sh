#!/bin/sh
# Every public header, included alone (the objects of failslow_header_check), leaves no code, no
# data and no static initialiser in the object: nothing is instantiated or emitted until a file
# calls it (docs/compile_times.md). Usage: emit_no_code.sh HEADER_CHECK_OBJECT_DIR
# collect/mpi.hpp is left out: Open MPI's mpi.h brings its C++ bindings (inline classes with
# vtables) and <iostream>'s initialiser, which are not failslow's.
status=0
count=0
for object in $(find "$1" -name '*.o' ! -name '*collect_mpi_hpp*' | sort); do
  count=$((count + 1))
  defined=$(nm --defined-only "$object" | grep -v ' [aAN] ' || true)
  if [ -n "$defined" ]; then
    echo "$object defines:"
    echo "$defined" | head -20
    status=1
  fi
done
if [ "$count" -eq 0 ]; then
  echo "no header check objects under $1"
  exit 1
fi
[ $status -eq 0 ] && echo "$count header objects: no code, no data, no static initialiser"
exit $status
