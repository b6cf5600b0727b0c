// Input uncertainty: a fitted input is an estimate from a finite log, so a run that should cover
// "what we do not know" draws the input's parameters afresh (scenario `parameter_uncertainty`).
//
// Service times: a parametric bootstrap of the maximum-likelihood fit (Cheng and Holland 1997,
// "Sensitivity of computer simulation experiments to errors in input data"; Barton and Schruben
// 2001, "Resampling methods for input modeling"): the parameters a refit of n fresh values from the
// fitted distribution would give. Exact for the exponential (the mean of n exponentials is
// Gamma(n) distributed) and the lognormal (mean and variance of n normals: normal and chi-square);
// for the gamma and Weibull, the MLE's asymptotic normal law (inverse Fisher information) on the log
// scale, as fit's own intervals are; the empirical distribution gets the Bayesian bootstrap's
// weights (Rubin 1981), the nonparametric bootstrap of n values kept as weights on its values.
//
// Daily volume fitted from D days as lognormal: the posterior predictive of a new day (Jeffreys
// prior): sigma^2 = s^2 (D - 1) / chi2(D - 1), the log-mean off the fitted one by sigma / sqrt(D),
// then the day itself; so the runs carry both the days' spread and how well D days know it.
#pragma once

#include <cstdint>

#include "sim/distribution.hpp"
#include "sim/rng.hpp"

namespace brokersim {

// Whether a service distribution of this kind can be redrawn (the families fit writes).
bool redrawable(const sim::Distribution& d);

// One run's service distribution: `fitted` (ns) as a refit of `n` >= 2 values drawn from it would
// give. `fitted` must be redrawable().
sim::Distribution redraw_fitted(const sim::Distribution& fitted, std::uint64_t n, sim::Rng& rng);

// One run's daily volume multiplier from a lognormal per-run law (`mean`, `cv`) fitted from `days`
// >= 2 days. `day` draws the day itself (the same standard normal a plug-in draw takes from it, so
// that a run keeps its day with or without the uncertainty); `parameters` draws the spread's and
// the level's error.
double predictive_day_volume(double mean, double cv, int days, sim::Rng& day, sim::Rng& parameters);

// A chi-square variate with `dof` > 0 degrees of freedom.
double chi_square(double dof, sim::Rng& rng);

}  // namespace brokersim
