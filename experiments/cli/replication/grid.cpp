#include "experiments/cli/replication/grid.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "experiments/cli/loader/scenario_load.hpp"
#include "experiments/cli/text.hpp"

namespace brokersim {

namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxAxisValues = 1'000'000;

bool parse_double(const std::string& text, double& v) {
  if (text.empty()) return false;
  const char* first = text.data();
  if (*first == '+') ++first;
  const auto r = std::from_chars(first, text.data() + text.size(), v);
  return r.ec == std::errc() && r.ptr == text.data() + text.size() && std::isfinite(v);
}

bool is_integer_token(const std::string& t) {
  std::size_t i = (!t.empty() && (t[0] == '-' || t[0] == '+')) ? 1 : 0;
  if (i == t.size()) return false;
  for (; i < t.size(); ++i)
    if (t[i] < '0' || t[i] > '9') return false;
  return t.size() <= 18;
}

std::size_t decimals_of(const std::string& t) {
  const auto dot = t.find('.');
  return dot == std::string::npos ? 0 : t.size() - dot - 1;
}

// A value's CSV label when it came from JSON (file sweep block, JSON-array LIST).
std::string json_label(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return format_number(v.get<double>());
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

SweepAxis parse_vary(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos) throw ScenarioError("--vary", "PATH=LIST", quote(spec));
  SweepAxis axis;
  axis.path = spec.substr(0, eq);
  const std::string list = spec.substr(eq + 1);
  if (axis.path.empty()) throw ScenarioError("--vary", "a key path before '='", quote(spec));
  const std::string where = "--vary " + axis.path;
  if (list.empty()) throw ScenarioError(where, "a LIST (1,2,4 or start:stop:step) after '='", "nothing");

  if (list.front() == '[') {
    json arr;
    try {
      arr = parse_json_text(list, where);
    } catch (const ScenarioError&) {
      throw ScenarioError(where, "a JSON array of values (LIST starts with '[')", quote(list));
    }
    if (!arr.is_array() || arr.empty()) throw ScenarioError(where, "a non-empty JSON array of values", quote(list));
    for (const auto& v : arr) {
      axis.values.push_back(v);
      axis.labels.push_back(json_label(v));
    }
    return axis;
  }

  const auto parts = split(list, ':');
  double a = 0, b = 0, step = 0;
  if (parts.size() == 3 && parse_double(parts[0], a) && parse_double(parts[1], b) && parse_double(parts[2], step)) {
    if (step == 0 || (b - a) / step < 0) {
      throw ScenarioError(where, "a range start:stop:step whose step is non-zero and goes from start towards stop",
                          quote(list));
    }
    const double span = (b - a) / step;
    if (!(span < static_cast<double>(kMaxAxisValues)))
      throw ScenarioError(where, "a range of at most " + std::to_string(kMaxAxisValues) + " values", quote(list));
    const auto n = static_cast<std::size_t>(std::floor(span + 1e-9)) + 1;
    const bool integers = is_integer_token(parts[0]) && is_integer_token(parts[1]) && is_integer_token(parts[2]);
    const bool exponent = list.find_first_of("eE") != std::string::npos;
    const std::size_t decimals =
        std::max({decimals_of(parts[0]), decimals_of(parts[1]), decimals_of(parts[2])});
    for (std::size_t i = 0; i < n; ++i) {
      if (integers) {
        const long long v = std::stoll(parts[0]) + static_cast<long long>(i) * std::stoll(parts[2]);
        axis.values.emplace_back(v);
        axis.labels.push_back(std::to_string(v));
      } else {
        double v = a + static_cast<double>(i) * step;
        if (!exponent) {
          // Round to the precision the user wrote (0.1:0.5:0.1 gives 0.3, not 0.30000000000000004).
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(std::min<std::size_t>(decimals, 17)), v);
          v = std::strtod(buf, nullptr);
        }
        if (v == 0) v = 0;  // no "-0"
        axis.values.emplace_back(v);
        axis.labels.push_back(format_number(v));
      }
    }
    return axis;
  }

  // "8:64", "1;2;4" or "1-8" read as strings would fail later as "expected an integer, got "8:64"",
  // which hides what went wrong: the LIST syntax. A number followed by a separator is that.
  const auto misread_list = [](const std::string& item) {
    return item.find_first_of("0123456789.+-") == 0 &&
           (item.find_first_of(":; \t") != std::string::npos || item.find('-', 1) != std::string::npos ||
            item.find("..") != std::string::npos);
  };
  for (const auto& item : split(list, ',')) {
    if (item.empty()) throw ScenarioError(where, "a comma-separated LIST without empty items", quote(list));
    json v;
    try {
      v = parse_json_text(item, where);
    } catch (const ScenarioError&) {
      if (misread_list(item))
        throw ScenarioError(where, "a list 1,2,4 or a range start:stop:step such as 8:64:8", quote(list));
      v = item;  // a bare word (drop-head) is a string, as in --set
    }
    axis.values.push_back(v);
    axis.labels.push_back(item);
  }
  return axis;
}

std::vector<SweepAxis> axes_from_block(const json& block) {
  if (!block.is_object() || block.empty())
    throw ScenarioError("sweep", "an object mapping key paths to arrays of values", json_label(block));
  std::vector<SweepAxis> axes;
  for (auto it = block.begin(); it != block.end(); ++it) {
    if (!it.value().is_array() || it.value().empty())
      throw ScenarioError("sweep." + it.key(), "a non-empty array of values", json_label(it.value()));
    SweepAxis axis;
    axis.path = it.key();
    for (const auto& v : it.value()) {
      axis.values.push_back(v);
      axis.labels.push_back(json_label(v));
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

std::size_t grid_size(const std::vector<SweepAxis>& axes) {
  std::size_t n = 1;
  for (const auto& a : axes) {
    if (a.values.empty()) return 0;
    if (n > kMaxGridPoints / a.values.size())
      throw ScenarioError("--vary", "a grid of at most " + std::to_string(kMaxGridPoints) + " points", "more");
    n *= a.values.size();
  }
  return n;
}

std::vector<std::size_t> grid_coords(const std::vector<SweepAxis>& axes, std::size_t point) {
  std::vector<std::size_t> c(axes.size());
  for (std::size_t i = axes.size(); i-- > 0;) {
    c[i] = point % axes[i].values.size();
    point /= axes[i].values.size();
  }
  return c;
}

json SweepSpace::point_doc(std::size_t point) const {
  json doc = base;
  const auto c = grid_coords(axes, point);
  for (std::size_t i = 0; i < axes.size(); ++i) set_path(doc, axes[i].path, axes[i].values[c[i]]);
  return doc;
}

std::uint64_t SweepSpace::effective_seed() const {
  if (seed) return *seed;
  return load_scenario(point_doc(0), base_dir).seed;
}

Scenario SweepSpace::point_scenario(std::size_t point) const {
  Scenario s;
  try {
    s = load_scenario(point_doc(point), base_dir);
  } catch (const ScenarioError& e) {
    throw ScenarioError("grid point " + std::to_string(point) + " (" + point_label(point) + "): " + e.what());
  }
  if (seed) s.seed = *seed;
  return s;
}

std::string SweepSpace::point_label(std::size_t point) const {
  const auto c = grid_coords(axes, point);
  std::string out;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (i) out += ", ";
    out += axes[i].path + "=" + axes[i].labels[c[i]];
  }
  return out;
}

SweepSpace load_sweep_space(const std::string& path, const std::vector<std::string>& sets,
                            const std::vector<std::string>& varies, std::optional<std::uint64_t> seed) {
  SweepSpace space;
  space.base = read_json_file(path);
  space.base_dir = std::filesystem::path(path).parent_path().string();
  space.seed = seed;
  // --set first, so that --set 'sweep={...}' gives (or replaces) the sweep block.
  for (const auto& s : sets) apply_set(space.base, s);
  json block;
  if (space.base.is_object() && space.base.contains("sweep")) {
    block = space.base["sweep"];
    space.base.erase("sweep");
  }
  if (!varies.empty()) {
    for (const auto& v : varies) space.axes.push_back(parse_vary(v));
  } else if (!block.is_null()) {
    space.axes = axes_from_block(block);
  } else {
    throw ScenarioError("sweep", "--vary PATH=LIST or a \"sweep\" block in the scenario", "nothing");
  }
  std::set<std::string> seen;
  for (const auto& a : space.axes)
    if (!seen.insert(a.path).second) throw ScenarioError("--vary " + a.path, "each path varied once", "it twice");
  // --seed replaces every point's seed: a varied seed would label rows with values never used.
  if (seed && seen.count("seed"))
    throw ScenarioError("--seed " + std::to_string(*seed) + " and a varied seed (--vary seed=... or the sweep block) " +
                        "cannot be combined: --seed would replace every varied value; give one of them");
  grid_size(space.axes);  // checks the size
  return space;
}

std::vector<Scenario> validate_points(const SweepSpace& space, const std::vector<std::size_t>& keep) {
  // Each value alone first, so that the error names the value that is wrong.
  for (const auto& axis : space.axes) {
    for (std::size_t i = 0; i < axis.values.size(); ++i) {
      try {
        json doc = space.base;
        set_path(doc, axis.path, axis.values[i]);
        load_scenario(doc, space.base_dir);
      } catch (const ScenarioError& e) {
        throw ScenarioError("--vary " + axis.path + "=" + axis.labels[i] + ": " + e.what());
      }
    }
  }
  std::vector<Scenario> kept;
  kept.reserve(keep.size());
  std::size_t k = 0;
  const std::size_t n = space.size();
  for (std::size_t p = 0; p < n; ++p) {
    const bool wanted = k < keep.size() && keep[k] == p;
    if (space.axes.size() > 1 || wanted) {
      Scenario s = space.point_scenario(p);
      if (wanted) {
        kept.push_back(std::move(s));
        ++k;
      }
    }
  }
  return kept;
}

}  // namespace brokersim
