// Subcommands of the failslow tool. Each registers itself on the CLI11 app and runs when chosen.
#pragma once

#include <CLI/CLI.hpp>

namespace failslow_cli {

void add_topology_command(CLI::App& app);
void add_classify_command(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_cluster_command(CLI::App& app);
void add_w1_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_score_command(CLI::App& app);
void add_detect_command(CLI::App& app);
void add_compress_command(CLI::App& app);
void add_diagnose_command(CLI::App& app);

}  // namespace failslow_cli
