// warmup_ms "auto", the warm-up chosen from the data, and the one way every command runs a
// scenario: choose the warm-up (when asked), then simulate.
//
// The rule (issue 44): MSER-5 on the average of a pilot set of replications, as in AutoSimOA
// (K. Hoad, S. Robinson and R. Davies, "Automating warm-up length estimation", JORS 61 (2010)
// 1389-1403), one cut for every replication of the point, taken past where a new replication
// settles at 99% (cut_for_every_replication). The pilots are replications of their
// own (kWarmupPilotBase + i, i < kWarmupPilots), never reported, so the data a figure is judged on
// never chose its own cut. The old rule, MSER-5 on each replication's own series, did reuse it:
// the cut lands where that run's remaining series looks steady, which under heavy traffic is
// after an excursion, and the figures came out low (mean wait 2.5% low with consumers attaching
// at 30 s; 8.6% low on M/M/1 at rho 0.95 started empty). A pilot set rather than the average of
// the reported replications themselves because the cut must not depend on how many replications
// are reported or where they run: --precision adds replications after its first stage, and shards
// and plan's task files run a point's replications in different processes; every process
// recomputes the same pilots from (scenario, seed) alone, so the cut is the same everywhere, for
// any thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/results.hpp"
#include "models/scenario.hpp"
#include "models/simulation.hpp"

namespace brokersim {

// Pilot replications: 10 (the cost of the old rule's pilot for a point of 10 replications),
// numbered from 2^63 so that no reported replication shares their streams.
inline constexpr std::uint64_t kWarmupPilots = 10;
inline constexpr std::uint64_t kWarmupPilotBase = std::uint64_t{1} << 63;

// warmup_ms "auto": the kWarmupPilots pilots run from time 0 (on up to `threads` threads; their
// results are combined in pilot order, so the choice is the same for any thread count) and each
// records the job-level series (sojourn or the stale indicator, per job with an outcome, in
// creation order). The series are averaged job by job over the pilots (up to the shortest), MSER-5
// on that average gives its truncation, and cut_for_every_replication the cut d; `s.warmup`
// becomes the mean creation time of job d over the pilots (0 when none is cut). The bias check:
// each pilot's kept data (jobs d to the shortest series' end), first half's mean less second
// half's, a paired Student-t statistic over the pilots (AutoWarmup::trend_t); |t| above the 99.5%
// quantile (1% two-sided) says the kept data still trends. s.auto_warmup records all of it. No-op
// for a scenario without "auto" or whose choice is made. Then every replication runs with that
// warm-up.
void choose_auto_warmup(Scenario& s, unsigned threads = 1);

// The cut, in jobs, that one warm-up for every replication needs, from the pilots' series and the
// truncation MSER-5 chose on their average: the later of that and where a new replication's own
// series settles, predicted at 99% from the pilots' (each pilot's own MSER-5 truncation over the
// shortest series' length m; their mean + t_{0.99, n-1} s sqrt(1 + 1/n), the normal upper
// prediction bound), the prediction taken no further than m / 2 (MSER-5's own candidates end at
// the first half). Why: the average of n pilots settles about where the slowest of them does, and
// a replication settles later than all n with chance 1 / (n + 1); with one cut for all, every such
// replication keeps the end of its transient (consumers attaching 30 s late to an M/M/4 at rho
// 0.9: the mean queue wait 2.4% high, its standard error 0.5%, from the 5.8% of replications still
// draining their backlog at the average's cut).
std::size_t cut_for_every_replication(const std::vector<std::vector<double>>& series, std::size_t average_cut);

// The rule before issue 44, kept only for `analytic --coverage --warmup`'s comparison: MSER-5 on
// this replication's own pilot run (its own streams), the cut applied to the same sample path.
void choose_auto_warmup_per_run(Scenario& s);

// choose_auto_warmup (on `threads`), then simulate: every command's run goes through here.
RunResult simulate_with_warmup(Scenario& s, const RunOptions& options = {}, unsigned threads = 1);

}  // namespace brokersim
