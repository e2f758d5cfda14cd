// failslow classify: compute / communication / memory for kernel names (arguments or stdin).
#include <failslow/core/kernel_class.hpp>
#include <failslow/io/detail/file_bytes.hpp>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"

namespace failslow_cli {
namespace {

struct classify_options {
  std::vector<std::string> names;
  std::vector<std::string> rule_files;
};

void run(const classify_options& o) {
  auto classifier = failslow::kernel_classifier::defaults();
  for (const auto& path : o.rule_files) {
    // Read as every file is (io/detail/file_bytes.hpp: the reason it cannot be, gzip works).
    const auto bytes = failslow::io::detail::file_bytes::open(path);
    std::istringstream in{std::string(bytes.view())};
    failslow::kernel_classifier user;
    failslow::parse_classification_rules(in, user, path);
    // A user's rules take precedence over the defaults, in file order.
    for (auto it = user.rules().rbegin(); it != user.rules().rend(); ++it) classifier.add_front(it->pattern, it->cls);
  }
  auto print = [&](const std::string& name) {
    std::cout << failslow::to_string(classifier.classify(name)) << '\t' << name << '\n';
  };
  if (!o.names.empty()) {
    for (const auto& n : o.names) print(n);
    return;
  }
  std::string line;
  while (std::getline(std::cin, line))
    if (!line.empty()) print(line);
}

}  // namespace

void add_classify_command(CLI::App& app) {
  auto opts = std::make_shared<classify_options>();
  CLI::App* cmd = app.add_subcommand("classify", "Class of GPU activity names (one per line on stdin, or arguments)");
  cmd->add_option("names", opts->names, "kernel names; read from stdin when absent");
  cmd->add_option("--rules", opts->rule_files, "rule file(s): lines 'CLASS KIND PATTERN', tried before the defaults")
      ->check(CLI::ExistingFile);
  cmd->callback([opts] { run(*opts); });
}

}  // namespace failslow_cli
