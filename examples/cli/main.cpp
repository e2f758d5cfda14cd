// failslow -- find the rank, kernel, link or stage that got slow.
#include <exception>
#include <failslow/core/error.hpp>
#include <failslow/version.hpp>
#include <iostream>
#include <new>

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
  // Whatever goes wrong ends in one line on stderr and exit status 2: a bad command line (an
  // unknown flag, a missing file), a bad input (the library's typed errors name the file and
  // what is wrong), or anything else thrown on the way. --help and --version exit 0.
  try {
    if (argc > 1 && argv[1][0] != '-') {
      try {
        (void)app.get_subcommand(argv[1]);
      } catch (const CLI::OptionNotFound&) {
        std::cerr << "failslow: unknown command '" << argv[1] << "' (failslow --help lists the commands)\n";
        return 2;
      }
    }
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "failslow: " << e.what() << " (failslow --help lists the commands and their options)\n";
    return 2;
  } catch (const failslow::error& e) {
    std::cerr << "failslow: " << e.what() << '\n';
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "failslow: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "failslow: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
