// What replications say about a mean: the Student-t confidence interval, for one series of values
// and for every metric column of a set of replications at once.
#pragma once

#include <cstddef>
#include <vector>

namespace brokersim {

// The two-sided Student-t quantile t_{(1 + confidence) / 2, dof}.
double student_t_quantile(std::size_t degrees_of_freedom, double confidence);

// The mean of `x` and the half-width t * s / sqrt(n) of its confidence interval, computed as
// t * sqrt(ss / (n - 1) / n) with ss the sum of squared deviations (sweep CSVs print it to the
// last bit, so that order is part of the output). The half-width is NaN for fewer than 2 values.
struct MeanInterval {
  double mean = 0, half_width = 0;
};
MeanInterval student_t_interval(const std::vector<double>& x, double confidence);
// The same with t given, for callers that take many intervals over the same n.
MeanInterval student_t_interval_with(const std::vector<double>& x, double t);

// Mean and 95% confidence half-width of each column of the replication rows; ci95 is NaN when
// there is a single replication. A column whose replications are all equal has exactly that
// mean and a half-width of 0 (a sum divided by n need not give the value back).
struct Summary {
  std::vector<double> mean, ci95;
};
Summary summarize(const std::vector<const std::vector<double>*>& replications);

}  // namespace brokersim
