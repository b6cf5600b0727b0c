// What the document tests share: a table row's cells, words squeezed to single spaces, and a
// small scenario whose runs take a moment.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace brokersim::test::docs {

// Periodic arrivals every 10 ms, 35 ms service: 3 consumers are overloaded, 4 keep up.
inline constexpr const char* kSmall = R"({"name": "claims", "seed": 1, "stop": {"jobs": 300},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"periodic": {"every_ms": 10}}, "deadline_ms": 300, "service_ms": 35}],
  "consumers": [{"queue": "work", "count": 4, "prefetch": 1}]})";

inline std::string squeeze(const std::string& s) {
  std::istringstream in(s);
  std::string word, out;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

inline std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::string cell;
  for (std::size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '|' && row[i - 1] != '\\') {
      out.push_back(squeeze(cell));
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  return out;
}

}  // namespace brokersim::test::docs
