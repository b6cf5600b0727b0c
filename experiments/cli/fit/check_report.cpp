// What `fit --check` prints and how its tolerance is written: the words of a verdict, the tolerance
// as the option gives it, and the check's table and sentences.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <system_error>

#include "experiments/cli/fit/check.hpp"
#include "experiments/cli/loader/checks.hpp"
#include "experiments/cli/loader/scenario_load.hpp"

namespace brokersim::fit {

void print_check(std::ostream& out, const CheckResult& result) {
  out << "\nCheck: the fitted workload through your scenario, " << result.replications
      << " replications, waits from enqueue to start (ms)\n";
  for (const auto& n : result.notes) out << "  note: " << n << '\n';
  if (!result.no_verdict.empty()) {
    out << "No verdict: " << result.no_verdict << ".\n";
    return;
  }
  char buf[400];
  for (const auto& q : result.queues) {
    std::snprintf(buf, sizeof buf, "  queue %s: %zu started jobs in the log, %.0f per replication\n",
                  loader::quoted(q.scenario_queue).c_str(), q.log_n, q.sim_n);
    out << buf;
    out << "    wait          log  simulated (95% CI of mean)   95% of runs within    difference (95% interval)   tolerance   verdict\n";
    for (const auto& m : q.metrics) {
      std::snprintf(buf, sizeof buf, "    %-6s %10.1f %10.1f (%8.1f .. %8.1f) %9.1f .. %9.1f %10.1f (%8.1f .. %8.1f) %9.1f   %s\n",
                    m.name.c_str(), m.log, m.sim_mean, m.ci_lo, m.ci_hi, m.pi_lo, m.pi_hi, m.diff, m.diff_lo, m.diff_hi,
                    m.tolerance, verdict_words(m.verdict));
      out << buf;
    }
    std::snprintf(buf, sizeof buf,
                  "    two-sample Kolmogorov-Smirnov distance, log vs simulated: %.4f (%.4f .. %.4f over replications), "
                  "%.4f with waits moved by up to the tolerance;\n"
                  "    between two replications: median %.4f, 95%% within %.4f: %s\n",
                  q.ks_log_mean, q.ks_log_min, q.ks_log_max, q.ks_log_tolerant, q.ks_sim_median, q.ks_sim_p95,
                  verdict_words(q.ks_verdict));
    out << buf;
  }
  const std::string tol = describe_tolerance(result.tol_rel, result.tol_abs_ms);
  if (result.verdict == Verdict::Matches) {
    out << "Verdict: the model matches the log: every wait statistic lies within the range of the model's own runs.\n";
  } else if (result.verdict == Verdict::DiffersSlightly) {
    out << "Verdict: the model differs slightly from the log: outside the range of the model's own runs, but by less "
           "than the tolerance (--check-tolerance " << tol << "):\n";
    for (const auto& q : result.queues)
      for (const auto& m : q.slight) out << "  - " << m << '\n';
  } else {
    out << "Verdict: the model does not match the log (tolerance " << tol << ").\n  Fails first: " << result.fails_first
        << "\n  Does not match:\n";
    for (const auto& q : result.queues)
      for (const auto& m : q.mismatches) out << "  - " << m << '\n';
    bool any_slight = false;
    for (const auto& q : result.queues) any_slight = any_slight || !q.slight.empty();
    if (any_slight) {
      out << "  Differs slightly (within the tolerance):\n";
      for (const auto& q : result.queues)
        for (const auto& m : q.slight) out << "  - " << m << '\n';
    }
  }
}

const char* verdict_words(Verdict v) {
  switch (v) {
    case Verdict::Matches: return "matches";
    case Verdict::DiffersSlightly: return "differs slightly";
    case Verdict::DoesNotMatch: return "does not match";
  }
  return "?";
}

std::string describe_tolerance(double rel, double abs_ms) {
  char buf[96];
  if (rel > 0 && abs_ms > 0) std::snprintf(buf, sizeof buf, "%.6g%% or %.6g ms, the larger", rel * 100, abs_ms);
  else if (rel > 0) std::snprintf(buf, sizeof buf, "%.6g%%", rel * 100);
  else std::snprintf(buf, sizeof buf, "%.6g ms", abs_ms);
  return buf;
}

void parse_check_tolerance(const std::string& text, double& rel, double& abs_ms) {
  const std::string expected = "a tolerance: a relative one like 10% (0 to 1000%), an absolute one like 50ms or 2s "
                               "(at most 1h), or both as 10%,20ms (the larger applies), or 0";
  rel = 0;
  abs_ms = 0;
  bool seen_rel = false, seen_abs = false;
  std::size_t start = 0;
  if (text.empty() || text.size() > 100) throw ScenarioError("--check-tolerance", expected, loader::quoted(text.substr(0, 100)));
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    std::size_t split = 0;
    while (split < item.size() && ((item[split] >= '0' && item[split] <= '9') || item[split] == '.')) ++split;
    double x = 0;
    const auto r = std::from_chars(item.data(), item.data() + split, x);
    if (split == 0 || r.ec != std::errc() || r.ptr != item.data() + split || !std::isfinite(x))
      throw ScenarioError("--check-tolerance", expected, loader::quoted(text));
    const std::string unit = item.substr(split);
    if (unit == "%" && !seen_rel && x <= 1000) {
      rel = x / 100;
      seen_rel = true;
    } else if ((unit == "ms" || unit == "s") && !seen_abs && x * (unit == "s" ? 1000 : 1) <= 3.6e6) {
      abs_ms = x * (unit == "s" ? 1000 : 1);
      seen_abs = true;
    } else if (unit.empty() && x == 0 && !seen_rel && !seen_abs && comma == text.size() && start == 0) {
      return;
    } else {
      throw ScenarioError("--check-tolerance", expected, loader::quoted(text));
    }
    start = comma + 1;
  }
}

}  // namespace brokersim::fit
