#include "models/ledger/windows.hpp"

#include <algorithm>
#include <utility>

#include "models/ledger/tally.hpp"

namespace brokersim {

WindowResult* Windows::at(Time created) {
  const auto k = static_cast<std::size_t>((created - warmup_) / width_);
  if (k >= windows_.size()) windows_.resize(k + 1);
  return &windows_[k];
}

void Windows::outcome(const Job& job, Outcome o) { tally_outcome(*at(job.created), job, o); }

std::vector<WindowResult> Windows::finish(Time now) {
  if (width_ == 0) return {};
  const Time start = std::min(warmup_, now);
  const auto n = static_cast<std::size_t>(std::max<Time>(1, (now - start + width_ - 1) / width_));
  while (windows_.size() > n) {
    windows_[n - 1].merge(windows_.back());
    windows_.pop_back();
  }
  windows_.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    windows_[k].from = start + static_cast<Time>(k) * width_;
    windows_[k].to = std::min(now, windows_[k].from + width_);
  }
  return std::move(windows_);
}

}  // namespace brokersim
