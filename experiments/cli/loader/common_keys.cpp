// The keys every scenario has whatever its broker: name, seed, stop, warm-up, faults, observe,
// limits and the sweep block.
#include "experiments/cli/loader/sections.hpp"

namespace brokersim::loader {

namespace {

// The group consumer c (numbered across groups) belongs to.
std::size_t group_of(const Scenario& s, int c) {
  std::size_t g = 0;
  int end = s.consumers[0].members();
  while (c >= end) end += s.consumers[++g].members();
  return g;
}

// kill_process: the group must say what its client does with a delivery whose process died.
void check_process_kill(const json& v, const std::string& path, const Scenario& s, int consumer) {
  if (v["kill_process"] != json(true)) fail(join(path, "kill_process"), "true", v["kill_process"]);
  const std::size_t g = group_of(s, consumer);
  if (s.consumers[g].on_process_lost != ConsumerSpec::OnProcessLost::None) return;
  fail_message(join(path, "consumer"),
               "expected a consumer whose group runs each execution in a process of its own and says what a killed one "
               "means (consumers." + std::to_string(g) + ".on_process_lost, or framework \"celery\"), got consumer " +
                   std::to_string(consumer) + " of group " + std::to_string(g) + ", which has none");
}

FaultSpec load_fault(const json& v, const std::string& path, const Scenario& s, int consumer_count) {
  object_at(v, path);
  check_keys(v, path, {"at_ms", "consumer", "stall_ms", "crash", "restart_after_ms", "broker_down_ms", "clock_step_ms", "kill_process"});
  FaultSpec fault;
  fault.at = ms_non_negative(member(v, "at_ms"), join(path, "at_ms"));
  const int kinds = has(v, "stall_ms") + has(v, "crash") + has(v, "broker_down_ms") + has(v, "clock_step_ms") + has(v, "kill_process");
  if (kinds != 1) fail(path, "exactly one of stall_ms, crash, broker_down_ms, clock_step_ms, kill_process", v);

  if (has(v, "restart_after_ms") && !has(v, "crash")) {
    fail_message(join(path, "restart_after_ms"), "only allowed with \"crash\": true");
  }
  if (has(v, "broker_down_ms")) {
    fault.kind = FaultSpec::Kind::BrokerDown;
    if (has(v, "consumer")) fail_message(join(path, "consumer"), "not allowed with broker_down_ms (the whole broker is down)");
    fault.duration = ms_positive(v["broker_down_ms"], join(path, "broker_down_ms"));
    return fault;
  }
  const std::string consumer_path = join(path, "consumer");
  const std::string expected = consumer_count == 0
                                   ? "a consumer index, but the scenario has no consumers"
                                   : "an integer >= 0 and < " + std::to_string(consumer_count) +
                                         " (consumers are numbered across all groups from 0)";
  fault.consumer = static_cast<int>(integer(member(v, "consumer"), consumer_path, 0, kMaxConsumers, expected));
  if (fault.consumer >= consumer_count) fail(consumer_path, expected, v["consumer"]);

  if (has(v, "stall_ms")) {
    fault.kind = FaultSpec::Kind::Stall;
    fault.duration = ms_positive(v["stall_ms"], join(path, "stall_ms"));
  } else if (has(v, "crash")) {
    fault.kind = FaultSpec::Kind::Crash;
    if (v["crash"] != json(true)) fail(join(path, "crash"), "true", v["crash"]);
    if (has(v, "restart_after_ms")) {
      fault.restart = true;
      fault.duration = ms_positive(v["restart_after_ms"], join(path, "restart_after_ms"));
    }
  } else if (has(v, "kill_process")) {
    fault.kind = FaultSpec::Kind::KillProcess;
    check_process_kill(v, path, s, fault.consumer);
  } else {
    fault.kind = FaultSpec::Kind::ClockStep;
    fault.step = sim::from_ms(any_number(v["clock_step_ms"], join(path, "clock_step_ms")));
  }
  return fault;
}

void check_sweep(const json& v) {
  object_at(v, "sweep", "an object mapping key paths to arrays of values");
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it.key().empty()) fail("sweep", "non-empty key paths", json(it.key()));
    non_empty_array(it.value(), join("sweep", it.key()), "a non-empty array of values");
  }
}

}  // namespace

void load_run_keys(const json& doc, Scenario& scenario) {
  if (has(doc, "name")) {
    if (!doc["name"].is_string()) fail("name", "a string", doc["name"]);
    scenario.name = doc["name"].get<std::string>();
  }
  if (has(doc, "seed")) scenario.seed = unsigned_integer(doc["seed"], "seed", 0);

  const json& stop = object_at(member(doc, "stop"), "stop", "an object with time_ms and/or jobs");
  check_keys(stop, "stop", {"time_ms", "jobs", "follow_ms"});
  if (stop.empty()) fail("stop", "at least one of time_ms, jobs", stop);
  if (has(stop, "time_ms")) scenario.stop_time = ms_positive(stop["time_ms"], "stop.time_ms");
  if (has(stop, "jobs")) scenario.stop_jobs = unsigned_integer(stop["jobs"], "stop.jobs", 1);
  if (has(stop, "follow_ms")) {
    if (!scenario.stop_time) fail("stop.follow_ms", "stop.time_ms beside it (a run that stops on its jobs follows them all)", stop["follow_ms"]);
    scenario.stop_follow = ms_non_negative(stop["follow_ms"], "stop.follow_ms");
  }

  if (has(doc, "warmup_ms") && (doc["warmup_ms"].is_string() || doc["warmup_ms"].is_object())) {
    // "auto": chosen from the data (MSER-5 on a pilot run's job-level series); the object form
    // names the series, since a run may reach steady state in one figure before another.
    const json& w = doc["warmup_ms"];
    const std::string expected = "a duration >= 0, \"auto\", or {\"auto\": \"sojourn\" or \"stale\"}";
    AutoWarmup a;
    if (w.is_string()) {
      if (w.get<std::string>() != "auto") fail("warmup_ms", expected, w);
    } else {
      if (w.size() != 1 || !w.contains("auto")) fail("warmup_ms", expected, w);
      const json& m = w["auto"];
      if (m == json("stale"))
        a.stale = true;
      else if (m != json("sojourn"))
        fail("warmup_ms.auto", "\"sojourn\" or \"stale\"", m);
    }
    scenario.auto_warmup = a;
  } else if (has(doc, "warmup_ms")) {
    scenario.warmup = ms_non_negative(doc["warmup_ms"], "warmup_ms");
    if (scenario.stop_time && scenario.warmup >= *scenario.stop_time) {
      fail("warmup_ms", "a number >= 0 and < stop.time_ms (" + describe(stop["time_ms"]) + ")", doc["warmup_ms"]);
    }
  }
}

void load_closing_keys(const json& doc, Scenario& scenario, std::int64_t consumer_count) {
  if (has(doc, "faults")) {
    const json& faults = doc["faults"];
    if (!faults.is_array()) fail("faults", "an array of faults", faults);
    for (std::size_t i = 0; i < faults.size(); ++i) {
      scenario.faults.push_back(load_fault(faults[i], join("faults", i), scenario, static_cast<int>(consumer_count)));
    }
  }

  if (has(doc, "observe")) {
    const json& observe = object_at(doc["observe"], "observe", "an object {\"every_ms\": d, \"window_ms\": d}");
    check_keys(observe, "observe", {"every_ms", "window_ms"});
    if (!has(observe, "every_ms") && !has(observe, "window_ms")) fail("observe", "at least one of every_ms, window_ms", observe);
    if (has(observe, "every_ms")) scenario.observe_every = ms_period(observe["every_ms"], "observe.every_ms");
    if (has(observe, "window_ms")) {
      const Time window = ms_positive(observe["window_ms"], "observe.window_ms");
      // Each window keeps its own waits: a bound on their number bounds the memory.
      constexpr Time kMaxWindows = 100'000;
      if (scenario.stop_time && (*scenario.stop_time - scenario.warmup) / window >= kMaxWindows) {
        fail("observe.window_ms", "at most " + std::to_string(kMaxWindows) + " windows in the measured span (" +
                                      format_number(sim::to_ms(*scenario.stop_time - scenario.warmup)) + " ms)",
             observe["window_ms"]);
      }
      scenario.observe_window = window;
    }
  }

  if (has(doc, "limits")) {
    const json& limits = object_at(doc["limits"], "limits", "an object with max_in_system and/or max_events");
    check_keys(limits, "limits", {"max_in_system", "max_events"});
    if (has(limits, "max_in_system")) scenario.limits.max_in_system = unsigned_integer(limits["max_in_system"], "limits.max_in_system", 1);
    if (has(limits, "max_events")) scenario.limits.max_events = unsigned_integer(limits["max_events"], "limits.max_events", 1);
  }

  if (has(doc, "sweep")) check_sweep(doc["sweep"]);
  // Text for people (what `brokersim import` read but does not model): checked for shape, never read.
  if (has(doc, "notes")) {
    const json& notes = doc["notes"];
    if (!notes.is_array()) fail("notes", "an array of strings", notes);
    for (std::size_t i = 0; i < notes.size(); ++i)
      if (!notes[i].is_string()) fail(join("notes", i), "a string", notes[i]);
  }
}

}  // namespace brokersim::loader
