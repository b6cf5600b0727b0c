#include "experiments/cli/analytic/values.hpp"

#include <algorithm>

#include "models/analytic/analytic.hpp"
#include "models/job.hpp"

namespace brokersim {

nlohmann::ordered_json nan_as_null(double v) { return std::isnan(v) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v); }

AnalyticValues analytic_values(const AnalyticFit& f, bool uniform_dispatch) {
  using namespace analytic;
  AnalyticValues v;
  switch (f.model) {
    case AnalyticModel::None: break;
    case AnalyticModel::ErlangC: {
      const ErlangC e = erlang_c(f.lambda, f.mu, f.c);
      v.p_abandon = v.p_abandon_queue = v.p_abandon_local = 0;
      v.p_wait = e.p_wait;
      v.mean_wait_served_s = v.mean_wait_s = e.mean_wait;
      v.throughput_per_s = f.lambda;
      v.utilization = e.rho;
      if (f.prefetch == 1) {
        v.mean_ready = e.mean_queue;
        v.mean_unacked = e.load;
      } else {  // c == 1: N ~ geometric(rho); ready = (N - p)^+, unacked = min(N, p)
        const double r = e.rho;
        v.mean_ready = f.prefetch == 0 ? 0.0 : std::pow(r, f.prefetch + 1) / (1 - r);
        v.mean_unacked = r / (1 - r) - v.mean_ready;
      }
      break;
    }
    case AnalyticModel::MMcD: {
      const MMcD m = mmc_deadline(f.lambda, f.mu, f.c, f.D);
      v.p_abandon = m.p_abandon;
      // P(V >= D_ttl) for D_ttl >= D: v(x) = lambda pi exp(lambda D - c mu x) beyond D (mmcd.hpp).
      const double cmu = f.c * f.mu;
      const double p_ttl = std::isinf(f.D_ttl) ? 0.0 : std::exp(m.log_v0 + f.lambda * f.D - cmu * f.D_ttl) / cmu;
      v.p_abandon_queue = f.at_dispatch ? p_ttl : m.p_abandon;
      v.p_abandon_local = m.p_abandon - v.p_abandon_queue;
      v.p_wait = m.p_wait;
      v.mean_wait_served_s = m.mean_wait_served;
      v.mean_wait_s = m.mean_wait;
      v.throughput_per_s = m.throughput;
      v.mean_unacked = m.mean_busy;
      v.utilization = m.mean_busy / f.c;
      if (!f.at_dispatch) v.mean_ready = m.mean_queue_head_only;
      else if (std::isinf(f.D_ttl)) v.mean_ready = m.mean_queue_purge_on_dispatch;
      break;
    }
    case AnalyticModel::ErlangA: {
      const ErlangA a = erlang_a(f.lambda, f.mu, f.c, f.theta);
      v.p_abandon = a.p_abandon;
      v.p_abandon_queue = f.at_dispatch ? 0.0 : a.p_abandon;
      v.p_abandon_local = f.at_dispatch ? a.p_abandon : 0.0;
      v.p_wait = a.p_wait;
      v.mean_wait_served_s = a.mean_wait_served;
      v.mean_wait_s = a.mean_wait;
      v.throughput_per_s = a.throughput;
      v.mean_unacked = a.mean_busy;
      v.utilization = a.mean_busy / f.c;
      v.mean_queue_live = a.mean_queue;
      break;
    }
    case AnalyticModel::PrefetchChain: {
      PrefetchParams pp{f.lambda, f.mu, f.theta, f.c, f.prefetch, 64,
                         uniform_dispatch ? Dispatch::UniformWithCredit : Dispatch::FewestUnacked, LocalExpiry::Lazy};
      PrefetchResult r = prefetch_ctmc(pp);
      while (r.truncation_mass > 1e-12 && pp.kmax < 8192) {
        pp.kmax *= 2;
        r = prefetch_ctmc(pp);
      }
      v.p_abandon = r.p_abandon;
      v.p_abandon_queue = r.p_abandon_broker;
      v.p_abandon_local = r.p_abandon_local;
      v.p_wait = r.p_wait;
      v.mean_wait_s = r.mean_wait;
      v.throughput_per_s = r.throughput;
      v.mean_unacked = r.mean_unacked;
      v.utilization = r.mean_busy / f.c;
      v.mean_queue_live = r.mean_broker_queue;
      break;
    }
  }
  return v;
}

AnalyticValues simulated_values(const AnalyticFit& f, const RunResult& r) {
  AnalyticValues v;
  const double n = static_cast<double>(r.generated);
  if (n == 0 || f.model == AnalyticModel::None) return v;
  auto count = [&](Outcome o) { return static_cast<double>(r.outcomes[static_cast<std::size_t>(o)]); };
  v.p_abandon_queue = count(Outcome::ExpiredInQueue) / n;
  v.p_abandon_local = (count(Outcome::ExpiredInTransit) + count(Outcome::ExpiredBeforeStart)) / n;
  v.p_abandon = v.p_abandon_queue + v.p_abandon_local;
  v.p_wait = (n - static_cast<double>(std::min(r.generated, r.started_at_once))) / n;
  const bool served_wait_measured =
      !f.at_dispatch && (f.model == AnalyticModel::MMcD || f.model == AnalyticModel::ErlangA ||
                         f.model == AnalyticModel::ErlangC);
  if (served_wait_measured) {
    v.mean_wait_served_s = r.wait(Wait::Queue).mean() / sim::kNsPerSF;
    if (f.prefetch != 1) v.mean_wait_served_s += r.wait(Wait::Local).mean() / sim::kNsPerSF;  // Erlang C, c = 1
  }
  v.throughput_per_s = r.measured_s > 0 ? static_cast<double>(r.span_completed) / r.measured_s : NAN;
  const QueueResult& q = r.queues.at(static_cast<std::size_t>(f.queue));
  v.mean_ready = q.mean_ready;
  v.mean_unacked = q.mean_unacked;
  v.utilization = r.slot_utilization;
  return v;
}

const std::vector<MetricDef>& analytic_metrics() {
  static const std::vector<MetricDef> m = {
      {"p_abandon", &AnalyticValues::p_abandon, 1},
      {"p_abandon_queue", &AnalyticValues::p_abandon_queue, 1},
      {"p_abandon_local", &AnalyticValues::p_abandon_local, 1},
      {"p_wait", &AnalyticValues::p_wait, 1},
      {"mean_wait_served_ms", &AnalyticValues::mean_wait_served_s, 1000},
      {"throughput_per_s", &AnalyticValues::throughput_per_s, 1},
      {"mean_ready", &AnalyticValues::mean_ready, 1},
      {"mean_unacked", &AnalyticValues::mean_unacked, 1},
      {"utilization", &AnalyticValues::utilization, 1},
  };
  return m;
}

nlohmann::ordered_json analytic_json(const AnalyticFit& f, const AnalyticValues& v) {
  nlohmann::ordered_json j;
  if (f.model == AnalyticModel::None) {
    j["model"] = nullptr;
    j["reason"] = f.reason;
    j["failures"] = f.failures;
    return j;
  }
  j["model"] = f.name;
  j["exact"] = f.exact;
  j["description"] = f.description;
  auto& par = j["parameters"];
  par["lambda_per_s"] = f.lambda;
  par["mu_per_s"] = f.mu;
  par["consumers"] = f.c;
  par["prefetch"] = f.prefetch;
  par["rho"] = f.lambda / (f.c * f.mu);
  if (f.model == AnalyticModel::MMcD) {
    par["D_ms"] = f.D * 1000;
    par["abandon_at_dispatch"] = f.at_dispatch;
  }
  if (f.model == AnalyticModel::ErlangA || f.model == AnalyticModel::PrefetchChain) {
    par["patience_mean_ms"] = 1000 / f.theta;
    if (f.model == AnalyticModel::ErlangA) par["abandon_at_dispatch"] = f.at_dispatch;
  }
  for (const auto& m : analytic_metrics()) j[m.name] = nan_as_null(v.*m.member * m.scale);
  j["mean_wait_ms"] = nan_as_null(v.mean_wait_s * 1000);
  j["mean_queue_live"] = nan_as_null(v.mean_queue_live);
  if (!f.exact && f.model == AnalyticModel::PrefetchChain) {
    const AnalyticValues u = analytic_values(f, true);
    auto& uj = j["uniform_with_credit"];
    for (const auto& m : analytic_metrics()) uj[m.name] = nan_as_null(u.*m.member * m.scale);
  }
  return j;
}

}  // namespace brokersim
