#include <iostream>
#include <string>
#include <vector>

#include "experiments/commands.hpp"
#include "experiments/output_file.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  brokersim::install_interrupt_cleanup();
  std::vector<std::string> args(argv + 1, argv + argc);
  return brokersim::cli_main(args, std::cout, std::cerr);
}
