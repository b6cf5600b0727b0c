// The scenario `fit` writes from what it fitted: the pieces the log tells (a producer per queue
// with its arrivals and service law, a fleet where the log names workers, the failures' chance),
// and the placeholder scenario around them (a RabbitMQ classic queue per log queue).
#pragma once

#include <string>
#include <vector>

#include "experiments/cli/fit/fitted_queue.hpp"
#include "models/scenario.hpp"

namespace brokersim::fit {

struct WriteOptions {
  std::string log_file;
  double span_ms = 0;
  bool days_mode = false, uncertainty = false;
  std::vector<std::string> notes;        // what reading the log found (clamps, outcomes, attempts)
};

// How many values the chosen service law was fitted from (the parametric families leave out the
// zeros, which have no density); 0 when fewer than 2 (nothing to redraw).
std::size_t redrawable_service_times(const ServiceFit& f);

// The producer fitted to queue q, publishing to `queue`: its arrivals (the mean day's with --days,
// and the days' volume spread), its service law and what they were fitted from. The keys of
// `base` (a scenario's own producer) other than these are kept.
ojson fitted_producer(const QueueFit& q, const std::string& queue, bool days_mode, ojson base = ojson::object());

// Whether group `group` of a loaded scenario tries a failed message again: Service Bus abandons it
// (peek-lock) and SQS leaves it to come back (on_failure keep); RabbitMQ acks it, and so does every
// broker when the client acknowledged before the execution ended.
bool failures_tried_again(const Scenario& s, std::size_t group);

// q.failure_probability and q.failure_key for group `group` (scenario path "consumers.N") of a
// scenario that does (or does not) try a failed message again. Only with an outcome column.
void map_failures(QueueFit& q, const JobLog& log, std::size_t group, bool tried_again);

// The consumer timeout a RabbitMQ broker needs: null when a job of the log ran longer than its
// default (30 min), so the log's broker did not enforce one. `longest_ms` the longest service time.
bool beyond_consumer_timeout(const std::vector<QueueFit>& queues, double& longest_ms);

// The scenario without --into: a classic queue per log queue, a producer to each, a group of the
// log's fleet on each, stop at the log's span (one day with --days), warm-up 0.
ojson placeholder_scenario(std::vector<QueueFit>& queues, const JobLog& log, const WriteOptions& options);

}  // namespace brokersim::fit
