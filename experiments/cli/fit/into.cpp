#include "experiments/cli/fit/into.hpp"

#include <algorithm>
#include <filesystem>

#include "experiments/cli/loader/checks.hpp"
#include "experiments/cli/loader/scenario_load.hpp"

namespace brokersim::fit {

namespace {

using loader::quoted;

// The scenario as its file orders it, and as brokersim loads it (which producer and group reads
// which queue, whether a group has a framework, what its slots came to).
struct Into {
  std::string label;  // "--into: PATH"
  ojson doc;
  Scenario scenario;
};

std::string folder_of(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

Scenario load_or_say(const ojson& doc, const std::string& dir, const std::string& label) {
  try {
    return load_scenario(nlohmann::json::parse(doc.dump()), dir);
  } catch (const ScenarioError& e) {
    throw ScenarioError(label + ": " + e.what());
  }
}

Into read_into(const IntoOptions& options) {
  Into into;
  into.label = "--into: " + options.path;
  const std::string text = loader::read_text(options.path, into.label);
  nlohmann::json plain;
  try {
    plain = parse_json_text(text, options.path);
  } catch (const ScenarioError& e) {
    throw ScenarioError(std::string("--into: ") + e.what());
  }
  if (!plain.is_object()) throw ScenarioError(into.label, "a JSON object (a scenario)", loader::describe(plain));
  into.scenario = load_or_say(ojson::parse(text), folder_of(options.path), into.label);
  into.doc = ojson::parse(text);  // the file's own order of keys
  return into;
}

int queue_index(const Scenario& s, const std::string& name) {
  for (std::size_t i = 0; i < s.broker.queues.size(); ++i)
    if (s.broker.queues[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string queue_list(const Scenario& s, const std::vector<int>& indices) {
  std::string names;
  for (int i : indices) names += (names.empty() ? "" : ", ") + quoted(s.broker.queues[static_cast<std::size_t>(i)].name);
  return names;
}

std::vector<int> all_queues(const Scenario& s) {
  std::vector<int> all;
  for (std::size_t i = 0; i < s.broker.queues.size(); ++i) all.push_back(static_cast<int>(i));
  return all;
}

// --into-queue's queue in the scenario.
int named_queue(const Scenario& s, const IntoOptions& options) {
  const int t = queue_index(s, options.queue);
  if (t < 0) throw ScenarioError("--into-queue", "a queue of " + options.path + ": " + queue_list(s, all_queues(s)), quoted(options.queue));
  return t;
}

// The queue a log of one queue maps onto when neither --into-queue nor its queue's name says: the
// one queue the scenario's producers publish to (or, without producers, its groups read).
int sole_queue(const Into& into, std::string& why) {
  std::vector<int> published;
  for (const ProducerSpec& p : into.scenario.producers)
    if (std::find(published.begin(), published.end(), p.queue) == published.end()) published.push_back(p.queue);
  std::string who = "its producers publish to";
  if (published.empty()) {
    for (const ConsumerSpec& c : into.scenario.consumers)
      if (std::find(published.begin(), published.end(), c.queue) == published.end()) published.push_back(c.queue);
    who = "its consumers read";
  }
  why = "the queue " + who;
  if (published.size() == 1) return published.front();
  std::sort(published.begin(), published.end());
  throw ScenarioError(into.label, "one queue the log's jobs go to (name it with --into-queue NAME)",
                      published.empty() ? "no producer or consumer naming one of its queues " + queue_list(into.scenario, all_queues(into.scenario))
                                        : who + " " + std::to_string(published.size()) + " queues: " + queue_list(into.scenario, published));
}

// The scenario's queue of each log queue (indices into its broker.queues).
std::vector<int> target_queues(const std::vector<QueueFit>& queues, const JobLog& log, const Into& into,
                               const IntoOptions& options, std::vector<std::string>& said) {
  const Scenario& s = into.scenario;
  if (!options.queue.empty()) {
    if (queues.size() > 1)
      throw ScenarioError("--into-queue", "no --into-queue with a log of several queues (each maps onto the scenario's queue of its name)",
                          quoted(options.queue));
    const int t = named_queue(s, options);
    said.push_back("the log's jobs go to queue " + quoted(options.queue) + " (--into-queue)");
    return {t};
  }
  std::vector<int> targets;
  for (const QueueFit& q : queues) {
    const int t = log.has_queue() ? queue_index(s, q.log_name) : -1;
    if (t >= 0) {
      targets.push_back(t);
      said.push_back("the log's queue " + quoted(q.log_name) + " goes to the scenario's queue of its name");
      continue;
    }
    if (queues.size() > 1)
      throw ScenarioError(into.label, "a queue named as the log's " + quoted(q.log_name) + " (the log has several queues: each maps onto the scenario's queue of its name)",
                          "the queues " + queue_list(s, all_queues(s)));
    std::string why;
    targets.push_back(sole_queue(into, why));
    said.push_back("the log's jobs" + (log.has_queue() ? " (queue " + quoted(q.log_name) + ")" : std::string()) + " go to queue " +
                   quoted(s.broker.queues[static_cast<std::size_t>(targets.back())].name) + ", " + why +
                   (s.broker.queues.size() > 1 ? " (its other queues are kept as they are; --into-queue names another)" : ""));
  }
  return targets;
}

std::string indices_text(const std::string& section, const std::vector<std::size_t>& indices) {
  std::string text;
  for (std::size_t i = 0; i < indices.size(); ++i)
    text += (i == 0 ? "" : i + 1 == indices.size() ? " and " : ", ") + section + "." + std::to_string(indices[i]);
  return text;
}

// The producer of queue `t`: the scenario's own, its arrivals and service law replaced (its other
// keys kept), or a new one when none publishes there.
void map_producer(QueueFit& q, int t, Into& into, const WriteOptions& write, std::vector<std::string>& said) {
  const std::string& name = into.scenario.broker.queues[static_cast<std::size_t>(t)].name;
  q.name = name;  // the report and the time series name it as the scenario does
  std::vector<std::size_t> publishing;
  for (std::size_t p = 0; p < into.scenario.producers.size(); ++p)
    if (into.scenario.producers[p].queue == t) publishing.push_back(p);
  if (publishing.size() > 1)
    throw ScenarioError(into.label, "at most one producer publishing to queue " + quoted(name) +
                                        " (the log's arrivals are all of its messages: keep one producer there)",
                        indices_text("producers", publishing));
  ojson& producers = into.doc["producers"];
  if (publishing.empty()) {
    q.producer = producers.size();
    producers.push_back(fitted_producer(q, name, write.days_mode));
    said.push_back("producers." + std::to_string(q.producer) + ": added, to queue " + quoted(name) + " (no producer published there)");
    return;
  }
  q.producer = publishing.front();
  producers[q.producer] = fitted_producer(q, name, write.days_mode, producers[q.producer]);
  said.push_back("producers." + std::to_string(q.producer) + ": arrivals and service_ms" + (write.days_mode ? ", volume" : "") +
                 " fitted from the log; its other keys kept");
}

// A group of the log's fleet, as fit writes one without --into.
ojson new_group(const QueueFit& q, const std::string& queue) {
  return {{"queue", queue}, {"count", q.fleet.count}, {"prefetch", q.fleet.slots}, {"slots", q.fleet.slots}};
}

// The fleet the log names (its workers, and the most each ran at once) put on the group reading
// `t`: its count (but an autoscaled group's, which the autoscaler sets) and its slots (but a
// framework's, which its settings set). Without a worker column the groups are kept.
void map_group(QueueFit& q, int t, Into& into, std::vector<int>& fitted_by, std::vector<std::string>& said) {
  const Scenario& s = into.scenario;
  const std::string& name = s.broker.queues[static_cast<std::size_t>(t)].name;
  std::vector<std::size_t> reading;
  for (std::size_t g = 0; g < s.consumers.size(); ++g)
    if (s.consumers[g].reads(t)) reading.push_back(g);
  ojson& groups = into.doc["consumers"];
  if (reading.empty()) {
    q.group = groups.size();
    groups.push_back(new_group(q, name));
    fitted_by.push_back(t);
    said.push_back("consumers." + std::to_string(q.group) + ": added, reading queue " + quoted(name) + " (no group read it): " + q.fleet.why);
    return;
  }
  if (reading.size() > 1 && q.fleet.from_workers)
    throw ScenarioError(into.label, "one consumer group reading queue " + quoted(name) + " (the log's workers are one fleet: keep one group there)",
                        indices_text("consumers", reading));
  q.group = reading.front();
  if (!q.fleet.from_workers) {
    said.push_back(indices_text("consumers", reading) + ": kept (the log names no workers)");
    if (reading.size() > 1) q.group = QueueFit::kNoGroup;  // no failure_probability either
    return;
  }
  if (fitted_by[q.group] >= 0 && fitted_by[q.group] != t)
    throw ScenarioError(into.label, "a consumer group per log queue (the log's workers of each queue are a fleet of their own)",
                        "consumers." + std::to_string(q.group) + " reads queues " + queue_list(s, {fitted_by[q.group], t}));
  fitted_by[q.group] = t;
  ojson& g = groups[q.group];
  const ConsumerSpec& c = s.consumers[q.group];
  const std::string at = "consumers." + std::to_string(q.group);
  const bool autoscaled = g.contains("autoscale") && !g["autoscale"].is_null();
  const bool framework = g.contains("framework") && !g["framework"].is_null();
  if (!autoscaled) g["count"] = q.fleet.count;
  if (!framework) g["slots"] = q.fleet.slots;
  std::string s_text = at + ": " +
                       (autoscaled ? "count kept (its autoscaler sets the replicas; the log had " + std::to_string(q.fleet.count) + " workers)"
                                   : "count " + std::to_string(c.count) + " -> " + std::to_string(q.fleet.count) + " (the log's workers)") +
                       ", " +
                       (framework ? "slots " + std::to_string(c.slots) + " kept (its framework's settings give them; the log's workers ran up to " +
                                        std::to_string(q.fleet.slots) + " at once)"
                                  : "slots " + std::to_string(c.slots) + " -> " + std::to_string(q.fleet.slots) + " (the most one worker ran at once)");
  if (!framework && c.prefetch > 0 && c.prefetch < q.fleet.slots)
    s_text += "; its prefetch " + std::to_string(c.prefetch) + " is kept, below the slots: at most " + std::to_string(c.prefetch) +
              " run at once (set it to " + std::to_string(q.fleet.slots) + " or more to use every slot)";
  said.push_back(s_text);
}

// The failures' chance on each queue's group, as the composed scenario treats a failed execution.
// A framework whose settings refuse it (a retry policy brokersim cannot honour) keeps the scenario
// without it, and the report says why.
void map_failures_into(std::vector<QueueFit>& queues, const JobLog& log, const std::vector<int>& targets, Into& into,
                       const std::string& dir) {
  if (!log.has_outcome) return;
  const Scenario composed = load_or_say(into.doc, dir, into.label + " with the log's fit");
  ojson with = into.doc;
  for (QueueFit& q : queues) {
    const std::string none = "in the written scenario, no failure_probability: ";
    if (q.group == QueueFit::kNoGroup) {
      q.failure_not_written = none + "several groups read the queue, and the log names no workers";
      continue;
    }
    if (std::count_if(queues.begin(), queues.end(), [&](const QueueFit& o) { return o.group == q.group; }) > 1) {
      q.failure_not_written = none + "consumers." + std::to_string(q.group) + " reads several of the log's queues, whose "
                              "failures it would share";
      continue;
    }
    // A group that also reads a queue the log does not cover would fail that queue's jobs too.
    const ConsumerSpec& c = composed.consumers[q.group];
    std::vector<int> uncovered;
    for (std::size_t k = 0; k <= c.other_queues.size(); ++k) {
      const int read = k == 0 ? c.queue : c.other_queues[k - 1];
      if (std::find(targets.begin(), targets.end(), read) == targets.end()) uncovered.push_back(read);
    }
    if (!uncovered.empty()) {
      q.failure_not_written = none + "consumers." + std::to_string(q.group) + " also reads " + queue_list(composed, uncovered) +
                              ", which the log does not cover";
      continue;
    }
    map_failures(q, log, q.group, failures_tried_again(composed, q.group));
    with["consumers"][q.group]["failure_probability"] = round6(q.failure_probability);
  }
  try {
    (void)load_scenario(nlohmann::json::parse(with.dump()), dir);
    into.doc = std::move(with);
  } catch (const ScenarioError& e) {
    for (QueueFit& q : queues)
      if (!q.failure_key.empty()) {
        q.failure_not_written = "in the written scenario, no failure_probability: " + q.failure_key + " is refused (" + e.what() + ")";
        q.failure_key.clear();
      }
  }
}

}  // namespace

void validate_into(const IntoOptions& options) {
  const Into into = read_into(options);
  if (!options.queue.empty()) (void)named_queue(into.scenario, options);
}

ojson fit_into(std::vector<QueueFit>& queues, const JobLog& log, const WriteOptions& write, const IntoOptions& options,
               std::vector<std::string>& said) {
  Into into = read_into(options);
  const std::vector<int> targets = target_queues(queues, log, into, options, said);
  std::vector<int> fitted_by(into.scenario.consumers.size(), -1);
  for (std::size_t i = 0; i < queues.size(); ++i) {
    map_producer(queues[i], targets[i], into, write, said);
    map_group(queues[i], targets[i], into, fitted_by, said);
  }
  // The fitted arrivals cover the log's span (or one mean day): the runs do too.
  const double stop_ms = write.days_mode ? sim::to_ms(kDayNs) : write.span_ms;
  into.doc["stop"]["time_ms"] = stop_ms;
  said.push_back("stop.time_ms: " + num(stop_ms, "%.0f") + (write.days_mode ? " (one day, --days)" : " (the log's span)") +
                 "; the broker, its queues and everything else kept");
  // A warm-up as long as the fitted span would leave nothing measured: the runs start as the log does.
  const ojson& warmup = into.doc.contains("warmup_ms") ? into.doc["warmup_ms"] : ojson();
  if (warmup.is_number() && warmup.get<double>() >= stop_ms) {
    said.push_back("warmup_ms " + num(warmup.get<double>(), "%.0f") + " -> 0: as long as the fitted span, it would leave nothing measured");
    into.doc["warmup_ms"] = 0;
  }
  if (write.uncertainty) into.doc["parameter_uncertainty"] = true;
  if (!into.doc.contains("notes")) into.doc["notes"] = ojson::array();
  into.doc["notes"].push_back("fit --into: " + std::filesystem::path(options.path).filename().string() + " with what " +
                              std::filesystem::path(write.log_file).filename().string() + " tells put in");
  for (const std::string& n : write.notes) into.doc["notes"].push_back(n);
  for (const std::string& n : said) into.doc["notes"].push_back(n);
  map_failures_into(queues, log, targets, into, options.out_dir);
  (void)load_or_say(into.doc, options.out_dir, into.label + " with the log's fit");
  return into.doc;
}

}  // namespace brokersim::fit
