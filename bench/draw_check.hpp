// Checking a sampler's draws on the host: every draw in [0, K), no zero-weight category drawn, and a chi-square
// goodness of fit of the draws of each distinct row against its weights (the bench's inputs repeat D distinct
// rows, so each distinct row collects M / D draws).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "chi_square.hpp"

namespace bench {

using bfly::stats::chi_square_p;

struct DrawCheck {
  bool ok = true;
  std::string problem;           // the first problem found, when !ok
  double p_combined = 1.0;       // chi-square over all distinct rows together
  double p_min_row = 1.0;        // smallest per-row p-value, times D (Bonferroni)
  long long draws_checked = 0;
};

// out: M draws; distinct: D rows of K weights (double copies of what the device holds); row r of the input is
// distinct row row_of(r). Fails when a draw is outside [0, K), a zero weight was drawn, or a p-value < threshold.
template <typename RowOf>
DrawCheck check_draws(const std::vector<int>& out, long long M, int K, const std::vector<double>& distinct, int D,
                      RowOf row_of, double threshold = 1e-6, double min_expected_per_bin = 10.0) {
  DrawCheck check;
  std::vector<long long> counts(static_cast<std::size_t>(D) * K, 0);
  std::vector<long long> draws(D, 0);
  for (long long r = 0; r < M; ++r) {
    const int v = out[static_cast<std::size_t>(r)];
    if (v < 0 || v >= K) {
      check.ok = false;
      check.problem = fmt::format("row {} drew {} (outside [0, {}); -1 means invalid row, {} an unwritten one)", r,
                                  v, K, static_cast<int>(0xFEFEFEFEu));
      return check;
    }
    const int d = row_of(r);
    ++counts[static_cast<std::size_t>(d) * K + v];
    ++draws[d];
  }
  check.draws_checked = M;
  double stat_sum = 0.0, df_sum = 0.0, p_min = 1.0;
  for (int d = 0; d < D; ++d) {
    const double* w = &distinct[static_cast<std::size_t>(d) * K];
    const long long* c = &counts[static_cast<std::size_t>(d) * K];
    double total = 0.0;
    for (int k = 0; k < K; ++k) total += w[k];
    for (int k = 0; k < K; ++k) {
      if (w[k] == 0.0 && c[k] != 0) {
        check.ok = false;
        check.problem = fmt::format("category {} has weight 0 in distinct row {} but was drawn {} times", k, d, c[k]);
        return check;
      }
    }
    // Consecutive nonzero categories merged into bins of at least min_expected_per_bin expected draws.
    const double n = static_cast<double>(draws[d]);
    double stat = 0.0, bin_expected = 0.0, bin_observed = 0.0;
    int bins = 0;
    double last_expected = 0.0, last_observed = 0.0;  // the last closed bin, reopened for a short tail
    bool have_last = false;
    for (int k = 0; k < K; ++k) {
      if (w[k] == 0.0) continue;
      bin_expected += n * w[k] / total;
      bin_observed += static_cast<double>(c[k]);
      if (bin_expected >= min_expected_per_bin) {
        if (have_last) stat += (last_observed - last_expected) * (last_observed - last_expected) / last_expected;
        last_expected = bin_expected;
        last_observed = bin_observed;
        have_last = true;
        ++bins;
        bin_expected = bin_observed = 0.0;
      }
    }
    if (have_last) {  // the tail joins the last bin
      last_expected += bin_expected;
      last_observed += bin_observed;
      stat += (last_observed - last_expected) * (last_observed - last_expected) / last_expected;
    }
    if (bins >= 2) {
      const double p = chi_square_p(stat, bins - 1);
      p_min = std::min(p_min, p);
      stat_sum += stat;
      df_sum += bins - 1;
    }
  }
  check.p_combined = chi_square_p(stat_sum, df_sum);
  check.p_min_row = std::min(1.0, p_min * D);
  if (check.p_combined < threshold || check.p_min_row < threshold) {
    check.ok = false;
    check.problem = fmt::format("draws do not fit the weights: chi-square p = {:.3g} over all rows (df {}), "
                                "smallest row p x {} = {:.3g}",
                                check.p_combined, df_sum, D, check.p_min_row);
  }
  return check;
}

}  // namespace bench
