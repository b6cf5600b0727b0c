// Which exact queueing model a scenario fits, and why (or which assumptions fail).
//
// Why each model is exact for brokersim (the assumptions checked by fit_analytic):
//
// Common: one producer, Poisson arrivals, exponential service, no publish delay, zero delivery
// and ack latency, no clock offsets or admission margins, one consumer group with one slot per
// consumer attached from t = 0, no faults, no execution timeout or failures, no length limits.
// Then a consumer with credit and prefetch 1 is idle (its previous ack has arrived), and the
// broker queue is non-empty only while no consumer has credit (dispatch runs on every credit).
//
// * M/M/c (Erlang C): prefetch 1, no expiry of any kind, rho < 1. With prefetch > 1 and c > 1 it
//   is NOT M/M/c: round-robin may hand a job to a busy consumer while another is idle. With c = 1
//   any prefetch gives M/M/1 (one server, FIFO, work conserving); the ready/unacked split is
//   then exact too: ready = (N - p)^+, unacked = min(N, p) with N geometric.
// * M/M/c+D: prefetch 1 and a constant patience D = min(queue TTL, constant message TTL,
//   deadline when an admission check enforces it). A job delivered before its TTL starts at once
//   (prefetch 1, zero latency), and with the deadline >= the TTL the admission check passes
//   (remaining budget > 0), so expired_in_queue is exactly "offered wait >= D". Head-only
//   expiry with a common D equals expiry at the deadline (mmcd.hpp, variant (b) = (a)); the
//   head timer's whole-millisecond rounding leaves an expired head up to ~2 ms longer in the
//   ready count, a bias of at most lambda * P(expired in queue) * 2 ms on mean_ready. Without a
//   TTL (deadline + admission only) the expired job is delivered and rejected in zero time:
//   the same served jobs, abandonment at dispatch (mmcd.hpp variant (c) for the ready count).
// * M/M/c+M (Erlang A): prefetch 1, exponential per-message TTL (expiration_ms {"exp": ...}, or
//   "remaining-budget" with an exponential deadline). Head-only expiry keeps expired messages
//   behind a live head, but they are never delivered and take no server time, so the live jobs
//   are served in FIFO order exactly as in Erlang A: P(abandon), P(wait), the served-wait law
//   and throughput are Erlang A's. The ready count is NOT Erlang A's queue length (it includes
//   expired messages waiting to reach the head), so mean_ready is not compared.
// * Prefetch CTMC (prefetch_ctmc.hpp, lazy local expiry): prefetch p > 1, exponential deadline,
//   broker TTL = remaining budget (a job expires in the broker queue exactly at its deadline),
//   admission check-before-start (an expired local job holds its credit until the consumer
//   reaches it and rejects it in zero time: "lazy"). With c = 1 dispatch plays no role and the
//   chain is exact. With c > 1 brokersim dispatches round-robin, which the chain does not model;
//   it is reported as an approximation (FewestUnacked dispatch, see experiments/validation).
#include "experiments/cli/analytic/fit.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "experiments/cli/text.hpp"
#include "models/job.hpp"

namespace brokersim {

namespace {

constexpr double kNs = sim::kNsPerSF;

std::string ms_text(double seconds) { return fmt(seconds * 1000.0) + " ms"; }

// A constant patience (s) or an exponential one (rate, 1/s) from a distribution in ns.
struct Patience {
  enum Kind { None, Const, Exp, Other } kind = None;
  double value = 0;  // Const: seconds; Exp: rate per second
};
Patience patience_of(const sim::Distribution& d) {
  if (d.kind() == sim::Distribution::Kind::Const) return {Patience::Const, d.param_a() / kNs};
  if (d.kind() == sim::Distribution::Kind::Exp) return {Patience::Exp, kNs / d.param_a()};
  return {Patience::Other, 0};
}

AnalyticFit no_model(std::vector<std::string> failures) {
  AnalyticFit f;
  f.failures = std::move(failures);
  f.reason = "no closed-form model: ";
  for (std::size_t i = 0; i < f.failures.size(); ++i) f.reason += (i ? "; " : "") + f.failures[i];
  return f;
}

// Number of multisets of size n from k kinds, saturating at `cap`.
double multisets(int n, int k) {
  double r = 1;
  for (int i = 1; i <= n; ++i) r = r * (k - 1 + i) / i;
  return r;
}

}  // namespace

namespace {

// The assumptions every model shares. All of them are checked, not just the first that fails:
// a user reaching for a model wants the whole list of what to change, not one item per run.
void check_common(const Scenario& s, std::vector<std::string>& fails) {
  const auto need = [&](bool ok, std::string why) {
    if (!ok) fails.push_back(std::move(why));
  };
  // Quorum queues dispatch, expire at the head and settle as classic queues do wherever the models
  // apply (no requeues, so no returns queue or delivery limit; no faults); they differ in the cap
  // on "unlimited" prefetch (2000) and in TTL 0 living 1 ms, both refused below.
  const bool rabbit = s.broker.kind == "rabbitmq-classic" || s.broker.kind == "rabbitmq-quorum";
  need(rabbit, "broker.kind is neither rabbitmq-classic nor rabbitmq-quorum");
  // The queue's own type (broker.queues.NAME.type, the kind's by default): the queue producers.0 publishes to.
  const bool quorum = rabbit && !s.producers.empty() &&
                      s.broker.queues[static_cast<std::size_t>(s.producers[0].queue)].rabbitmq.type == QueueType::Quorum;
  need(s.producers.size() == 1,
       "the scenario has " + std::to_string(s.producers.size()) + " producers (the models need exactly 1)");
  if (!s.producers.empty()) {
    const ProducerSpec& p = s.producers[0];
    need(p.arrivals.kind == ArrivalSpec::Kind::Poisson, "producers.0.arrivals is not poisson");
    need(p.service.kind() == sim::Distribution::Kind::Exp,
         "producers.0.service_ms is not exponential ({\"exp\": {\"mean\": m}})");
    need(p.publish_delay.is_zero(), "producers.0.publish_delay_ms is not 0");
    need(p.clock_offset.is_zero(), "producers.0.clock_offset_ms is not 0");
  }
  need(s.broker.delivery_latency.is_zero(), "broker.delivery_latency_ms is not 0");
  need(s.broker.ack_latency.is_zero(), "broker.ack_latency_ms is not 0");
  need(s.broker.rabbitmq.expiry_slack.is_zero(), "broker.expiry_slack_ms is not 0");
  need(s.faults.empty(), "faults is not empty");
  need(s.consumers.size() == 1,
       "the scenario has " + std::to_string(s.consumers.size()) + " consumer groups (the models need exactly 1)");
  if (s.consumers.empty()) return;
  const ConsumerSpec& c = s.consumers[0];
  if (!s.producers.empty()) need(c.queue == s.producers[0].queue, "consumers.0.queue is not the queue producers.0 publishes to");
  need(c.slots == 1, "consumers.0.slots is not 1");
  need(c.start == 0, "consumers.0.start_ms is not 0");
  need(c.clock_offset.is_zero(), "consumers.0.clock_offset_ms is not 0");
  need(c.uncertainty == 0, "consumers.0.uncertainty_ms is not 0");
  need(c.min_window == 0, "consumers.0.min_window_ms is not 0");
  need(c.exec_timeout == ConsumerSpec::ExecTimeout::None, "consumers.0.exec_timeout is not null");
  need(c.failure_probability == 0, "consumers.0.failure_probability is not 0");
  need(c.on_expired != OnExpired::Requeue, "consumers.0.on_expired is requeue");
  // An ack before the job starts or on receipt returns the credit while the slot is busy: a
  // second job waits in the consumer, which no model here has a place for.
  need(c.ack == AckMode::AfterFinish, std::string("consumers.0.ack is ") +
                                          (c.ack == AckMode::BeforeStart ? "before-start" : "on-receipt") +
                                          " (the models need after-finish: the credit comes back when the slot is free)");
  // The models are stationary with c servers throughout.
  need(!c.stop, "consumers.0.stop_ms is set (the group leaves during the run; the models keep c consumers)");
  need(!c.autoscale, "consumers.0.autoscale is set (the fleet changes during the run; the models keep c consumers)");
  if (quorum) need(c.prefetch != 0, "consumers.0.prefetch is 0, which a quorum queue caps at 2000");
  if (s.producers.empty()) return;
  const ProducerSpec& p = s.producers[0];
  // A job held for its ETA waits in the consumer, in no model here.
  need(!p.countdown || c.eta == ConsumerSpec::Eta::Ignore, "producers.0.countdown_ms is set and consumers.0.eta holds the job");
  const QueueSpec& q = s.broker.queues[static_cast<std::size_t>(p.queue)];
  const std::string qpath = "broker.queues." + q.name + ".";
  need(!q.max_length, qpath + "max_length is set");
  need(!q.max_length_bytes, qpath + "max_length_bytes is set");
  need(!q.expires, qpath + "expires_ms is set");
  if (quorum) {
    need(!(q.message_ttl && *q.message_ttl == 0), qpath + "message_ttl_ms is 0, which a quorum queue keeps for 1 ms");
    need(!(p.expiration == ProducerSpec::Expiration::Fixed && p.expiration_value.is_zero()),
         "producers.0.expiration_ms is 0, which a quorum queue keeps for 1 ms");
  }
  need(q.dead_letter_index != p.queue, qpath + "dead_letter_to is the queue itself");
  need(!rabbit || !s.broker.rabbitmq.consumer_timeout || !(std::exp(-static_cast<double>(*s.broker.rabbitmq.consumer_timeout) / p.service.mean()) > 1e-12),
       "broker.consumer_timeout_ms is within 28 mean service times (a long job would close the channel)");
}

// Patience in the broker queue (TTL) and at the consumer (the deadline, if admission checks it).
struct Patiences {
  Patience ttl, adm;
  bool remaining_budget = false;
};

std::optional<Patiences> patiences_of(const Scenario& s, std::vector<std::string>& fails) {
  const ProducerSpec& p = s.producers[0];
  const ConsumerSpec& c = s.consumers[0];
  const QueueSpec& q = s.broker.queues[static_cast<std::size_t>(p.queue)];
  const std::string qpath = "broker.queues." + q.name + ".";
  Patiences r;
  if (q.message_ttl) r.ttl = {Patience::Const, static_cast<double>(*q.message_ttl) / kNs};
  Patience msg;
  const Patience deadline = p.deadline ? patience_of(*p.deadline) : Patience{};
  bool known = true, deadline_named = false;
  if (p.expiration == ProducerSpec::Expiration::Fixed) {
    msg = patience_of(p.expiration_value);
    if (msg.kind == Patience::Other) fails.emplace_back("producers.0.expiration_ms is neither constant nor exponential"), known = false;
  } else if (p.expiration == ProducerSpec::Expiration::RemainingBudget && p.deadline) {
    msg = deadline;  // publish at creation, producer clock true: TTL = the deadline
    if (msg.kind == Patience::Other)
      fails.emplace_back("producers.0.deadline_ms is neither constant nor exponential (it sets the TTL via remaining-budget)"),
          known = false, deadline_named = true;
  }
  if (msg.kind == Patience::Const) {
    if (r.ttl.kind == Patience::None || msg.value < r.ttl.value) r.ttl = msg;
  } else if (msg.kind == Patience::Exp) {
    if (r.ttl.kind != Patience::None)
      fails.push_back(qpath + "message_ttl_ms and an exponential producers.0.expiration_ms together (patience min(const, exp))"), known = false;
    r.ttl = msg;
  }
  if (c.admission != Admission::None && p.deadline) {
    r.adm = deadline;
    if (r.adm.kind == Patience::Other && !deadline_named)
      fails.emplace_back("producers.0.deadline_ms is neither constant nor exponential and consumers.0.admission checks it");
    if (r.adm.kind == Patience::Other) known = false;
  }
  r.remaining_budget = p.expiration == ProducerSpec::Expiration::RemainingBudget && p.deadline;
  if (!known) return std::nullopt;
  return r;
}

// The model the scenario's prefetch and patience select, filled into `f`; or the assumption of
// the closest model that fails.
std::optional<std::string> choose_model(AnalyticFit& f, const Patiences& pat, const ConsumerSpec& c) {
  const Patience& ttl = pat.ttl;
  const Patience& adm = pat.adm;
  const double rho = f.lambda / (f.c * f.mu);
  auto describe = [&](std::string text) {
    std::ostringstream o;
    o << text << "; lambda = " << fmt(f.lambda) << "/s, mu = " << fmt(f.mu) << "/s, c = " << f.c
      << ", rho = " << fmt(rho, 4);
    f.description = o.str();
  };

  // --- prefetch > 1 (or unlimited) with several consumers, or any prefetch with expiry
  const bool prefetch_one = c.prefetch == 1;
  if (!prefetch_one && (ttl.kind != Patience::None || adm.kind != Patience::None)) {
    const std::string pf = "consumers.0.prefetch is " + std::to_string(c.prefetch);
    if (c.prefetch == 0) return pf + " (unlimited) with expiry: the prefetch chain needs a finite prefetch";
    if (!(ttl.kind == Patience::Exp && adm.kind == Patience::Exp && pat.remaining_budget))
      return pf + " with expiry: the prefetch chain needs an exponential producers.0.deadline_ms, "
                  "producers.0.expiration_ms \"remaining-budget\" (expiry in the queue at the deadline) and an "
                  "admission check (expiry in the prefetch buffer at the deadline)";
    // 2^prefetch kinds: beyond 16 the chain is too large for any c (and the shift would overflow).
    const double states = c.prefetch > 16 ? INFINITY : multisets(f.c, 1 << c.prefetch);
    if (states > 20000) return pf + " with " + std::to_string(f.c) + " consumers: the prefetch chain would be too large";
    f.model = AnalyticModel::PrefetchChain;
    f.theta = ttl.value;
    f.exact = f.c == 1;
    f.name = "prefetch CTMC (lazy local expiry)";
    describe(std::string("exponential deadline (mean ") + ms_text(1 / f.theta) + ") as patience in the queue and the prefetch buffers, p = " +
             std::to_string(c.prefetch) +
             (f.c == 1 ? "; one consumer, so dispatch plays no role: exact"
                       : "; APPROXIMATION: brokersim dispatches round-robin; the values are the chain with "
                         "fewest-unacked dispatch (optimistic), uniform_with_credit the pessimistic bracket"));
    return std::nullopt;
  }
  if (!prefetch_one && f.c > 1)
    return "consumers.0.prefetch is " + std::to_string(c.prefetch) + " with " + std::to_string(f.c) +
           " consumers: round-robin can hand a job to a busy consumer while another is idle, so it is not "
           "M/M/c (only prefetch 1, or a single consumer, is)";

  // --- prefetch 1 (or a single consumer without expiry)
  if (ttl.kind == Patience::None && adm.kind == Patience::None) {
    if (rho >= 1) return "utilisation lambda / (c mu) = " + fmt(rho, 4) + " >= 1 with no expiry: no steady state";
    f.model = AnalyticModel::ErlangC;
    f.name = "M/M/c (Erlang C)";
    describe(prefetch_one ? "no expiry, prefetch 1" : "no expiry, one consumer (any prefetch is M/M/1)");
    return std::nullopt;
  }
  if (ttl.kind == Patience::Exp || adm.kind == Patience::Exp) {
    if (ttl.kind == Patience::Const || adm.kind == Patience::Const)
      return "a constant and an exponential patience together (broker TTL vs admission deadline)";
    if (ttl.kind == Patience::Exp && adm.kind == Patience::Exp && !pat.remaining_budget)
      return "an exponential producers.0.expiration_ms and an independent exponential deadline checked by admission";
    f.model = AnalyticModel::ErlangA;
    f.theta = ttl.kind == Patience::Exp ? ttl.value : adm.value;
    f.at_dispatch = ttl.kind == Patience::None;
    f.name = "M/M/c+M (Erlang A)";
    describe(std::string("exponential patience (mean ") + ms_text(1 / f.theta) + ") " +
             (f.at_dispatch ? "enforced by the admission check when delivered (no broker TTL)"
                            : "as the per-message TTL (head-only expiry never delivers an expired message)"));
    return std::nullopt;
  }
  // Constant patience.
  f.model = AnalyticModel::MMcD;
  f.D_ttl = ttl.kind == Patience::Const ? ttl.value : INFINITY;
  f.D = std::min(f.D_ttl, adm.kind == Patience::Const ? adm.value : INFINITY);
  f.at_dispatch = f.D < f.D_ttl;
  f.name = "M/M/c+D";
  describe("constant patience D = " + ms_text(f.D) +
           (f.at_dispatch ? (std::isinf(f.D_ttl) ? " (deadline, enforced by the admission check at delivery; no broker TTL)"
                                                 : " (deadline, enforced at delivery; the broker TTL " + ms_text(f.D_ttl) + " is longer)")
                          : " (broker TTL, expiry in the queue)"));
  return std::nullopt;
}

}  // namespace

AnalyticFit fit_analytic(const Scenario& s) {
  std::vector<std::string> fails;
  check_common(s, fails);
  if (s.producers.empty() || s.consumers.empty()) return no_model(fails);
  const ProducerSpec& p = s.producers[0];
  const ConsumerSpec& c = s.consumers[0];
  const std::optional<Patiences> pat = patiences_of(s, fails);
  if (!pat) return no_model(fails);

  // The closest model's own condition, judged as if the common assumptions held.
  AnalyticFit f;
  f.queue = p.queue;
  f.lambda = p.arrivals.rate_per_s;
  f.mu = kNs / p.service.mean();
  f.c = c.count;
  f.prefetch = c.prefetch;
  if (const auto why = choose_model(f, *pat, c)) fails.push_back(*why);
  if (!fails.empty()) return no_model(fails);
  return f;
}

}  // namespace brokersim
