// Catch2's runner for the MPI tests (test_mpi_collect.cpp): MPI_Init and MPI_Finalize around the
// session, --ranks-per-node=N taken out of the arguments, and one exit code for every process.
// Compiled apart from the tests, without their -Werror (as test_main.cpp): Catch2's implementation
// trips GCC 12's maybe-uninitialized inside <regex> under the sanitizers.
#define CATCH_CONFIG_RUNNER
#include <mpi.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <vector>

int failslow_mpi_test_ranks_per_node = 0;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--ranks-per-node=", 17) == 0) {
      failslow_mpi_test_ranks_per_node = std::atoi(argv[i] + 17);
      continue;
    }
    args.push_back(argv[i]);
  }
  Catch::Session session;
  int failed = session.run(static_cast<int>(args.size()), args.data());
  // Every process says whether it passed; the exit code is the same everywhere.
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
