#include "experiments/cli/replication/warmup.hpp"

#include <vector>

#include "sim/mser.hpp"

namespace brokersim {

void choose_auto_warmup(Scenario& s) {
  if (!s.auto_warmup || s.auto_warmup->chosen) return;
  Scenario pilot = s;
  pilot.warmup = 0;
  std::vector<JobSample> samples;
  RunOptions o;
  o.job_series = &samples;
  o.job_series_stale = s.auto_warmup->stale;
  simulate(pilot, o);
  // Jobs still in the system at the end have no value yet: the series is the jobs with an outcome.
  std::vector<double> series;
  std::vector<Time> created;
  for (const auto& js : samples)
    if (js.created >= 0) {
      series.push_back(js.value);
      created.push_back(js.created);
    }
  const sim::MserResult m = sim::mser(series);
  s.warmup = m.truncate > 0 && m.truncate < created.size() ? created[m.truncate] : 0;
  s.auto_warmup->chosen = true;
  s.auto_warmup->steady = m.steady;
  s.auto_warmup->jobs_discarded = m.truncate;
}

RunResult simulate_with_warmup(Scenario& s, const RunOptions& options) {
  choose_auto_warmup(s);
  return simulate(s, options);
}

}  // namespace brokersim
