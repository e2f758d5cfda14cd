// Where does a rank sit in a hybrid-parallel job, and who are its peers?
//   ./example_topology_groups
#include <failslow/core/topology.hpp>
#include <iostream>

int main() {
  using failslow::parallel_dim;
  // 64 GPUs: tensor parallel 2 (inside a node), pipeline 4 stages, data parallel 8.
  failslow::parallel_sizes sizes;
  sizes.tp = 2;
  sizes.pp = 4;
  sizes.dp = 8;
  const failslow::topology job(sizes, "tp-cp-ep-dp-pp", /*world_size=*/64);

  const int rank = 13;
  const failslow::coordinates c = job.coords(rank);
  std::cout << "rank " << rank << ": tp=" << c[parallel_dim::tp] << " dp=" << c[parallel_dim::dp]
            << " pp=" << c[parallel_dim::pp] << '\n';
  for (parallel_dim d : {parallel_dim::tp, parallel_dim::dp, parallel_dim::pp}) {
    std::cout << "  " << job.group_name(rank, d) << " = {";
    const char* sep = "";
    for (int r : job.group(rank, d)) {
      std::cout << sep << r;
      sep = ", ";
    }
    std::cout << "}\n";
  }
  std::cout << "  pipeline stage " << c[parallel_dim::pp] << " has " << job.stage(c[parallel_dim::pp]).size()
            << " ranks\n";
}
