// --timeseries: one CSV row per observe.every_ms (docs/outcomes.md "--timeseries series.csv").
#pragma once

#include <iosfwd>

#include "models/run_observer.hpp"

namespace brokersim {

class TimeseriesCsv final : public StateObserver {
 public:
  explicit TimeseriesCsv(std::ostream& out) : out_(out) {}
  void started(const World& w) override;  // the header
  void observed(const World& w, const OutcomeCounts& decided) override;

 private:
  std::ostream& out_;
};

}  // namespace brokersim
