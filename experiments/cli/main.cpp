#include <iostream>
#include <string>
#include <vector>

#include "experiments/cli/command_line.hpp"
#include "experiments/cli/output_file.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  brokersim::install_interrupt_cleanup();
  brokersim::guard_standard_streams();
  std::vector<std::string> args(argv + 1, argv + argc);
  const int status = brokersim::cli_main(args, std::cout, std::cerr);
  // Every byte of standard output is checked: a full disk or a closed stdout is an error, never
  // a silent truncation behind exit status 0.
  const std::string failed = brokersim::finish_standard_output();
  if (failed.empty()) return status;
  std::cerr << "brokersim: error: " << failed << '\n';
  return status == 1 ? 1 : 2;
}
