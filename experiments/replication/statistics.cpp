#include "experiments/replication/statistics.hpp"

#include <cmath>
#include <limits>

#include <boost/math/distributions/students_t.hpp>

namespace brokersim {

double student_t_quantile(std::size_t dof, double confidence) {
  const boost::math::students_t dist(static_cast<double>(dof));
  return boost::math::quantile(dist, 1 - (1 - confidence) / 2);
}

MeanInterval student_t_interval_with(const std::vector<double>& x, double t) {
  const std::size_t n = x.size();
  MeanInterval r;
  double sum = 0;
  for (double v : x) sum += v;
  r.mean = n ? sum / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
  if (n < 2) {
    r.half_width = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  double ss = 0;
  for (double v : x) ss += (v - r.mean) * (v - r.mean);
  r.half_width = t * std::sqrt(ss / static_cast<double>(n - 1) / static_cast<double>(n));
  return r;
}

MeanInterval student_t_interval(const std::vector<double>& x, double confidence) {
  return student_t_interval_with(x, x.size() > 1 ? student_t_quantile(x.size() - 1, confidence) : 0.0);
}

Summary summarize(const std::vector<const std::vector<double>*>& reps) {
  Summary s;
  if (reps.empty()) return s;
  const std::size_t m = reps.front()->size();
  const std::size_t n = reps.size();
  const double t = n > 1 ? student_t_quantile(n - 1, 0.95) : 0.0;
  s.mean.resize(m);
  s.ci95.resize(m);
  std::vector<double> column(n);
  for (std::size_t j = 0; j < m; ++j) {
    const double first = (*reps[0])[j];
    bool same = true;
    for (std::size_t r = 0; r < n; ++r) {
      column[r] = (*reps[r])[j];
      same = same && column[r] == first;
    }
    if (same) {
      s.mean[j] = first;
      s.ci95[j] = n > 1 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
    } else {
      const MeanInterval i = student_t_interval_with(column, t);
      s.mean[j] = i.mean;
      s.ci95[j] = i.half_width;
    }
  }
  return s;
}

}  // namespace brokersim
