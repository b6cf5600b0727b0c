#include "experiments/cli/fit/fitted_scenario.hpp"

#include <algorithm>
#include <filesystem>

namespace brokersim::fit {

std::size_t redrawable_service_times(const ServiceFit& f) {
  const bool empirical = f.fits[f.chosen].family == FittedDistribution::Family::Empirical;
  const std::size_t n = empirical ? f.n : f.n - f.zeros;
  return n >= 2 ? n : 0;
}

ojson fitted_producer(const QueueFit& q, const std::string& queue, bool days_mode, ojson base) {
  base["queue"] = queue;
  base["arrivals"] = rate_schedule(days_mode ? q.mean_day : q.arrivals);
  base["service_ms"] = q.service.fits[q.service.chosen].syntax;
  if (days_mode) {
    // Each run one day, its volume drawn from the days' spread (the lognormal cv, or the sample
    // cv when a day had no jobs).
    const double cv = q.days.lognormal ? q.days.cv : q.days.sample_cv;
    base["volume"] = {{"per_run", {{"lognormal", {{"mean", 1}, {"cv", round6(cv)}}}}}};
    if (q.days.lognormal)
      base["volume"]["fitted"] = {{"days", q.days.days.size()}, {"cv_low", round6(q.days.cv_lo)}, {"cv_high", round6(q.days.cv_hi)}};
  }
  // What each fitted parameter was estimated from: what parameter_uncertainty redraws from.
  // Fitted from days, the rates' level is the days' (volume.fitted): not counted twice.
  ojson fitted = ojson::object();
  if (const std::size_t n = redrawable_service_times(q.service)) fitted["service_times"] = n;
  if (!days_mode) fitted["arrivals"] = q.arrival_times.size();
  if (!fitted.empty()) base["fitted"] = fitted;
  else base.erase("fitted");
  return base;
}

bool failures_tried_again(const Scenario& s, std::size_t group) {
  const ConsumerSpec& c = s.consumers.at(group);
  if (c.ack != AckMode::AfterFinish) return false;
  if (s.broker.kind == "azure-servicebus") return !c.servicebus.receive_and_delete;
  if (s.broker.kind == "amazon-sqs") return !c.sqs.delete_failed;
  return false;
}

void map_failures(QueueFit& q, const JobLog& log, std::size_t group, bool tried_again) {
  if (!log.has_outcome) return;
  q.failures_tried_again = tried_again;
  q.failure_probability = q.failures.probability(tried_again);
  q.failure_key = "consumers." + std::to_string(group) + ".failure_probability";
}

bool beyond_consumer_timeout(const std::vector<QueueFit>& queues, double& longest_ms) {
  longest_ms = 0;
  for (const auto& q : queues)
    if (!q.service.sample.empty()) longest_ms = std::max(longest_ms, q.service.sample.back());
  constexpr double kDefaultConsumerTimeoutMs = 1'800'000;
  return longest_ms > kDefaultConsumerTimeoutMs;
}

ojson placeholder_scenario(std::vector<QueueFit>& queues, const JobLog& log, const WriteOptions& options) {
  ojson doc;
  doc["name"] = "fitted from " + std::filesystem::path(options.log_file).filename().string();
  doc["seed"] = 1;
  doc["stop"] = {{"time_ms", options.days_mode ? sim::to_ms(kDayNs) : options.span_ms}};
  doc["warmup_ms"] = 0;
  if (options.uncertainty) doc["parameter_uncertainty"] = true;
  doc["broker"] = {{"kind", "rabbitmq-classic"}, {"queues", ojson::object()}};
  // Jobs that ran longer than RabbitMQ's default consumer timeout (30 min) finished in the log, so
  // its broker did not enforce one: neither does the fitted scenario (with it, every such job would
  // be redelivered for ever).
  double longest_ms = 0;
  if (beyond_consumer_timeout(queues, longest_ms)) doc["broker"]["consumer_timeout_ms"] = nullptr;
  if (!options.notes.empty()) doc["notes"] = options.notes;
  doc["producers"] = ojson::array();
  doc["consumers"] = ojson::array();
  for (std::size_t i = 0; i < queues.size(); ++i) {
    QueueFit& q = queues[i];
    q.producer = q.group = i;
    doc["broker"]["queues"][q.name] = ojson::object();
    doc["producers"].push_back(fitted_producer(q, q.name, options.days_mode));
    // Prefetch as many as the slots: the least that keeps every slot busy (with prefetch 1, a
    // consumer of 4 slots ran one job at a time). A log does not show the prefetch: set yours.
    ojson group{{"queue", q.name}, {"count", q.fleet.count}, {"prefetch", q.fleet.slots}, {"slots", q.fleet.slots}};
    // A RabbitMQ client acks a failed job: the chance that a message ends failed.
    map_failures(q, log, i, false);
    if (q.failure_probability > 0) {
      group["failure_probability"] = round6(q.failure_probability);
    } else if (!q.failure_key.empty()) {
      q.failure_key.clear();
      q.failure_not_written = "in the written scenario, no failure_probability: no message ended failed (a failed execution is "
                              "final there, as RabbitMQ's client acks it: the chance is that a message ends failed)";
    }
    doc["consumers"].push_back(group);
  }
  return doc;
}

}  // namespace brokersim::fit
