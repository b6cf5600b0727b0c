// Which exact queueing model a scenario fits (Erlang C, M/M/c+D, Erlang A, the prefetch chain)
// and its parameters, or every assumption that fails; the reasons are in fit.cpp.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace brokersim {

enum class AnalyticModel { None, ErlangC, MMcD, ErlangA, PrefetchChain };

struct AnalyticFit {
  AnalyticModel model = AnalyticModel::None;
  std::string reason;          // model == None: "no closed-form model: " + the failures joined by "; "
  std::vector<std::string> failures;  // model == None: every assumption that fails, each naming its key path
  std::string name;            // e.g. "M/M/c+D"
  std::string description;     // how the scenario maps onto it
  bool exact = true;           // false: an approximation (named in `description`)
  int queue = 0;               // the queue the consumers read
  double lambda = 0;           // arrivals per second
  double mu = 0;               // service rate per consumer, per second
  int c = 1;                   // consumers
  int prefetch = 1;            // 0 = unlimited
  double D = INFINITY;         // M/M/c+D: patience (s) = min(broker TTL, deadline if admission checks it)
  double D_ttl = INFINITY;     // the broker TTL part of it (s)
  double theta = 0;            // Erlang A / prefetch chain: patience rate (1/s)
  bool at_dispatch = false;    // abandonment happens when the expired job is delivered and the
                               // consumer's admission check rejects it (no broker TTL before it)
};

AnalyticFit fit_analytic(const Scenario& s);

}  // namespace brokersim
