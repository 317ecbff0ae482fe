// The split of a row over CTAs that a sample_split launch uses when its caller leaves the choice to bfly
// (docs/DESIGN.md section 12). Plain C++ with no CUDA in it, and the one definition of the rule: the runtime
// (bfly::gen::choose_split_ctas_per_row) includes this file, and a kernel's ahead-of-time header pastes it for its
// launch function. The split never changes a draw, only how many CTAs share the work of a row.
#ifndef BFLY_SAMPLE_SPLIT_LAUNCH_CUH
#define BFLY_SAMPLE_SPLIT_LAUNCH_CUH

namespace bfly {

// The CTAs a launch aims at per multiprocessor, over all its rows: with fewer, the SMs that hold none of a launch
// of few rows leave their memory pipes and shuffle units idle while the others work through whole slices.
constexpr int kSplitCtasPerMultiprocessor = 2;

// The CTAs per row of a launch of `rows` rows of `tiles_per_row` tiles on a device of `multiprocessors` SMs, where
// one CTA loads `tiles_per_round` tiles at once (each group its tiles in flight):
// - the fewest CTAs that load a row in one round, ceil(tiles_per_row / tiles_per_round), whenever the launch has
//   kSplitCtasPerMultiprocessor CTAs per SM with them (or rows or multiprocessors is not positive);
// - otherwise ceil(kSplitCtasPerMultiprocessor * multiprocessors / rows), up to one tile per CTA.
constexpr int split_ctas_per_row(int tiles_per_row, int tiles_per_round, long long rows, int multiprocessors) {
  const int one_round = (tiles_per_row + tiles_per_round - 1) / tiles_per_round;
  const long long target = static_cast<long long>(kSplitCtasPerMultiprocessor) * multiprocessors;
  if (rows <= 0 || multiprocessors <= 0 || rows >= (target + one_round - 1) / one_round) return one_round;
  const long long wanted = (target + rows - 1) / rows;
  return wanted < tiles_per_row ? static_cast<int>(wanted) : tiles_per_row;
}

}  // namespace bfly

#endif  // BFLY_SAMPLE_SPLIT_LAUNCH_CUH
