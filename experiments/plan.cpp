#include "experiments/commands.hpp"
#include <ostream>
namespace brokersim {
int cmd_plan(const std::vector<std::string>&, std::ostream&, std::ostream& err) { err << "todo\n"; return 1; }
}
