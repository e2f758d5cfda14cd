// failslow -- find the rank, kernel, link or stage that got slow.
#include <failslow/core/error.hpp>
#include <failslow/version.hpp>
#include <iostream>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"failslow: find fail-slow ranks, kernels, links and stages in distributed GPU training"};
  app.set_version_flag("--version", std::string("failslow ") + failslow::version_string);
  app.require_subcommand(1);
  failslow_cli::add_demo_command(app);
  failslow_cli::add_topology_command(app);
  failslow_cli::add_classify_command(app);
  failslow_cli::add_cluster_command(app);
  failslow_cli::add_w1_command(app);
  failslow_cli::add_inspect_command(app);
  failslow_cli::add_simulate_command(app);
  failslow_cli::add_score_command(app);
  failslow_cli::add_detect_command(app);
  failslow_cli::add_compress_command(app);
  failslow_cli::add_diagnose_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const failslow::error& e) {
    std::cerr << "failslow: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
