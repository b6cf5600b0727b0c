// One run: the wiring. The event kinds and their simultaneous order are in models/events.hpp,
// the loop and its event limits in the kernel (sim/simulator.hpp); here is who handles which
// event, what a run's span and its stop conditions mean, and the observation of the state over
// time.
// The broker (models/brokers/), the consumers (models/consumer.cpp), the producers
// (models/producer.cpp) and the books (models/ledger.cpp) do the rest; the trace and time-series
// writers (experiments/cli/outputs/) hear of the run through models/run_observer.hpp.
#include "models/simulation.hpp"

#include <algorithm>
#include <optional>
#include <ostream>

#include "models/broker.hpp"
#include "models/fleet.hpp"
#include "models/producer.hpp"
#include "models/world.hpp"

namespace brokersim {
namespace {

class Simulation {
 public:
  Simulation(const Scenario& s, const RunOptions& o);
  RunResult run(std::uint64_t* stream_fingerprint);

  // What the kernel's loop calls (sim::Simulator::run). The handler is inlined into the loop:
  // called, it costs about 16 instructions per event more (callgrind, M/M/10).
  [[gnu::always_inline]] inline void handle(const sim::Event& ev);
  // After every event: one test of three cached figures while no limit is near (the loop's
  // cheapest way to the same answer), the reasons only when one might be.
  bool stop() {
    if (w_.jobs.live() <= max_in_system_ && w_.ledger.created_total < stop_jobs_ && !following_) [[likely]] return false;
    return past_a_limit();
  }
  void progress() {
    if (w_.opt.progress) report_progress();
  }

 private:
  void start();
  void on_fault(const FaultSpec& f);
  void on_warmup();
  void on_observe();
  std::uint64_t samples_ = 0;  // Observe events handled
  void report_progress();
  bool past_a_limit();
  void close_span(Time end);
  bool following_ = false;  // past stop.time_ms, following the span's jobs (world.hpp)
  std::vector<ConsumerResult> consumers_at_span_end_;
  std::vector<double> broker_figures_at_span_end_;  // what the broker reports of itself, at the span's end

  // A run whose time stopped moving: more than this many events at one simulated instant.
  static constexpr std::uint64_t kMaxEventsAtOneInstant = 50'000'000;

  World w_;
  std::unique_ptr<Broker> broker_;
  Fleet fleet_;
  const std::uint64_t stop_jobs_;  // s.stop_jobs, or the largest count (read after every event)
  const std::uint64_t max_in_system_;  // s.limits.max_in_system, likewise
};

Simulation::Simulation(const Scenario& s, const RunOptions& o)
    : w_(s, o), fleet_(w_), stop_jobs_(s.stop_jobs.value_or(~std::uint64_t{0})),
      max_in_system_(s.limits.max_in_system) {
  for (std::size_t p = 0; p < s.producers.size(); ++p)
    w_.producers.emplace_back(s.producers[p], static_cast<int>(p), s.seed, s.replication);
  int index = 0;
  for (std::size_t g = 0; g < s.consumers.size(); ++g)
    for (int m = 0; m < s.consumers[g].members(); ++m)
      w_.consumers.emplace_back(s.consumers[g], index++, static_cast<int>(g), m, s.seed, s.replication);
  w_.ledger.set_idle_of([](const void* w, int c) { return static_cast<const World*>(w)->consumers[static_cast<std::size_t>(c)].idle_slots(); }, &w_);
  broker_ = make_broker(w_);
  w_.broker = broker_.get();
}

// The first events. Simultaneous events of one kind keep this insertion order.
void Simulation::start() {
  const Scenario& s = w_.s;
  if (s.warmup > 0) w_.at(s.warmup, Ev::Warmup, 0);
  for (std::uint32_t f = 0; f < s.faults.size(); ++f) w_.at(s.faults[f].at, Ev::Fault, f);
  broker_->start();
  // An autoscaled group's members beyond its initial count wait for the autoscaler.
  std::uint32_t first = 0;
  for (const auto& g : s.consumers) {
    for (int m = 0; m < g.count; ++m) w_.at(g.start, Ev::Attach, first + static_cast<std::uint32_t>(m));
    first += static_cast<std::uint32_t>(g.members());
  }
  fleet_.start();
  for (std::uint32_t p = 0; p < w_.producers.size(); ++p) {
    const Time t = w_.producers[p].next_arrival();
    if (t != sim::kNever && t <= w_.horizon) w_.at(t, Ev::Arrival, p);
  }
  // Sampling only for an observer (--timeseries): unobserved samples would cost events, and a
  // sparse run (one arrival a year) would be sampled every observe.every_ms for all its span.
  if (s.observe_every && w_.opt.state_observer) {
    w_.opt.state_observer->started(w_);
    w_.schedule_tick(0, Ev::Observe, 0);
  }
}

inline void Simulation::handle(const sim::Event& ev) {
  switch (static_cast<Ev>(ev.kind)) {
    case Ev::Warmup: on_warmup(); break;
    case Ev::Fault: on_fault(w_.s.faults[ev.target]); break;
    case Ev::Attach: w_.consumers[ev.target].connect(w_); break;
    case Ev::ReplicaUp:
    case Ev::Leave: fleet_.on_event(ev); break;
    case Ev::Scale:
      w_.tick_fired(Ev::Scale);
      fleet_.on_event(ev);
      break;
    case Ev::Close: w_.consumers[ev.target].close_for_leave(w_, ev.tag); break;
    case Ev::BrokerUp:
    case Ev::Declare:
    case Ev::QueueLease:
    case Ev::SessionIdle:
    case Ev::QueueTimer:
    case Ev::DeadLetter:
    case Ev::DlxTimer:
    case Ev::ChannelTick:
    case Ev::Heartbeat:
    case Ev::Lease:
    case Ev::Activate: broker_->on_event(ev); break;
    case Ev::AckArrive: broker_->settle(ev.target, ev.tag); break;
    case Ev::Publish:
      if (w_.jobs[ev.target].gen == ev.tag) publish_job(w_, ev.target);
      break;
    case Ev::Arrival: create_job(w_, ev.target); break;
    case Ev::Receive:
      if (const Job& job = w_.jobs[ev.target]; job.gen == ev.tag)  // World::receive_at
        w_.consumers[static_cast<std::size_t>(job.consumer)].receive(w_, ev.target, ev.aux);
      break;
    case Ev::ExecDone:
      if (w_.jobs[ev.target].gen == ev.tag) w_.consumers[w_.jobs[ev.target].consumer].exec_done(w_, ev.target, ev.aux);
      break;
    case Ev::StallEnd: w_.consumers[ev.target].stall_end(w_); break;
    case Ev::BatchTurn: w_.consumers[ev.target].batch_turn(w_, ev.tag, ev.aux); break;
    case Ev::EtaDue:
      if (const Job& job = w_.jobs[ev.target]; job.gen == ev.tag)
        w_.consumers[static_cast<std::size_t>(job.consumer)].eta_due(w_, ev.target, ev.aux);
      break;
    case Ev::Observe:
      w_.tick_fired(Ev::Observe);
      on_observe();
      break;
  }
}

// Kept out of line: inlined into simulate(), the event loop compiles to slower code (callgrind,
// M/M/10: about 40 instructions more per job).
[[gnu::noinline]] RunResult Simulation::run(std::uint64_t* stream_fingerprint) {
  if (stream_fingerprint) w_.fingerprint_stream();
  start();
  RunResult& r = w_.ledger.r;
  const Scenario& s = w_.s;
  r.stop_reason = StopReason::Drained;
  const sim::Limits limits{s.limits.max_events, kMaxEventsAtOneInstant};
  // A timed run: the measured span up to stop.time_ms, then (unless every job of the span has
  // left already) the following of the span's jobs up to the horizon (world.hpp).
  sim::Stop stop = w_.run(*this, s.stop_time.value_or(sim::kNever), limits);
  const bool by_time = stop == sim::Stop::Until;
  if (by_time) {
    r.stop_reason = StopReason::Time;
    close_span(*s.stop_time);
    if (!w_.ledger.counted_settled() && w_.horizon != *s.stop_time) {
      following_ = true;
      stop = w_.run(*this, w_.horizon, limits);
    }
  }
  // max_events first; otherwise simulated time stopped moving: e.g. a consumer requeueing an
  // expired job that the broker, with zero latencies, redelivers at once, forever. (Stop::Model:
  // past_a_limit set the reason, or left it when a following run's last job left.)
  if (stop == sim::Stop::MaxEvents) r.stop_reason = StopReason::MaxEvents;
  if (stop == sim::Stop::ZeroTimeLoop) r.stop_reason = StopReason::ZeroTimeLoop;
  if (following_) r.followed = w_.now - *s.stop_time;
  // A run given a time span covers all of it, even when nothing happened towards its end.
  if (s.stop_time && (by_time || r.stop_reason == StopReason::Drained)) w_.advance_to(*s.stop_time);
  if (w_.opt.progress && w_.popped() > 0x3fffff) *w_.opt.progress << '\n';
  // The samples of --timeseries counted toward limits.max_events, but are not the model's: the
  // reported count is the same with or without the time series.
  r.events = w_.popped() - samples_;
  if (stream_fingerprint) *stream_fingerprint = w_.stream_fingerprint();
  if (!by_time) close_span(w_.now);
  RunResult result;
  w_.ledger.finish(w_.now, w_.jobs, result);
  result.consumers = std::move(consumers_at_span_end_);
  // The broker's own counters (SQS receive sizes) are event counts of the span, as taken at its end.
  result.broker_figures = std::move(broker_figures_at_span_end_);
  for (const Producer& p : w_.producers) {
    result.volumes.push_back(p.volume());
    result.days.push_back(static_cast<double>(p.day()));
    result.service_means_ms.push_back(p.service().mean() / sim::kNsPerMsF);
  }
  return result;
}

// The measured span ends: its time figures are taken (Ledger::close_span), the consumers' own
// among them; a following run goes on counting only the span's jobs.
void Simulation::close_span(Time end) {
  w_.ledger.close_span(end);
  for (const Consumer& c : w_.consumers) consumers_at_span_end_.push_back(c.result(end));
  broker_->report(broker_figures_at_span_end_);
}

bool Simulation::past_a_limit() {
  RunResult& r = w_.ledger.r;
  if (w_.jobs.live() > max_in_system_) [[unlikely]] {
    r.stop_reason = StopReason::MaxInSystem;
    return true;
  }
  if (w_.ledger.created_total >= stop_jobs_ && w_.ledger.settled()) {
    r.stop_reason = StopReason::Jobs;
    return true;
  }
  // Following past the stop: done when the span's last job is.
  return following_ && w_.ledger.counted_settled();
}

void Simulation::on_fault(const FaultSpec& f) {
  switch (f.kind) {
    case FaultSpec::Kind::Stall: w_.consumers[f.consumer].stall(w_, f.duration); break;
    case FaultSpec::Kind::ClockStep: w_.consumers[f.consumer].clock.step(f.step); break;
    case FaultSpec::Kind::Crash: {
      Consumer& c = w_.consumers[f.consumer];
      if (!c.attached) break;
      c.crash(w_);
      if (f.restart) w_.at(w_.now + f.duration, Ev::Attach, static_cast<std::uint32_t>(f.consumer));
      break;
    }
    case FaultSpec::Kind::BrokerDown: broker_->down(f.duration); break;
    case FaultSpec::Kind::KillProcess: w_.consumers[f.consumer].kill_process(w_); break;
  }
}

void Simulation::on_warmup() {
  w_.ledger.warmup(w_.now);
  for (auto& c : w_.consumers) c.warmup(w_.now);
}

void Simulation::on_observe() {
  ++samples_;
  w_.opt.state_observer->observed(w_, w_.ledger.take_interval_outcomes());
  // A timed run is sampled over its whole span; a run that stops on its jobs is sampled only
  // while something else can still happen, so sampling never keeps a finished run alive.
  const Time next = w_.now + *w_.s.observe_every;
  if (w_.s.stop_time ? next <= *w_.s.stop_time : !w_.only_ticks_pending()) {
    w_.schedule_tick(next, Ev::Observe, 0);
  }
}

void Simulation::report_progress() {
  std::ostream& out = *w_.opt.progress;
  const Scenario& s = w_.s;
  out << "\rsimulated " << sim::to_ms(w_.now) / 1000.0 << " s";
  if (s.stop_time) out << " of " << sim::to_ms(*s.stop_time) / 1000.0 << " s";
  out << ", " << w_.ledger.created_total << " jobs";
  if (s.stop_jobs) out << " of " << *s.stop_jobs;
  out << ", " << w_.popped() << " events   " << std::flush;
}

}  // namespace

RunResult simulate(const Scenario& scenario, const RunOptions& options) {
  Simulation sim(scenario, options);
  return sim.run(nullptr);
}

RunResult simulate(const Scenario& scenario, const RunOptions& options, std::uint64_t& stream_fingerprint) {
  Simulation sim(scenario, options);
  return sim.run(&stream_fingerprint);
}

}  // namespace brokersim
