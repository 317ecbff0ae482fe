// The one table of which specs exist for what: the CPU draw-for-draw matrix, the NVRTC compile matrix,
// and the example spec of the README's main job. Emission never decides which specs exist.
#pragma once

#include "bfly/spec/kernel_spec.hpp"
#include "bfly/spec/lda_baseline.hpp"

#include <vector>

namespace bfly::gen {

// R in {0, 8, W-1} clamped to W-1 (a threshold at or above W-1 already searches every remnant linearly),
// duplicates removed, in a fixed order.
std::vector<int> remnant_thresholds_for(int W);

// W in {4, 8, 16, 32}; K in {1, 2, 3, W-1, W, W+1, 71, 100, 1000, 1024, 4097}; R per remnant_thresholds_for;
// f32 and f64; swap and addsub. Every spec is valid and appears once.
std::vector<KernelSpec> draw_test_specs();

// The sample_split draw-test matrix: W = 32 at K in {2, 3, 5, 16, 1000, 4097, 65536, 262144} (one tile, several,
// several CTAs per row, 16 CTAs per row) and W = 8 at K in {5, 100}, every element type, addsub; and swap for f32 and
// f64 at W = 32, K in {1000, 65536}; and f32 at K = 20000 (two CTAs, the second partly past the last tile). Then
// sample_split_pairs: bf16 and f16 at W = 32, K in {2, 6, 1000, 4098, 65536, 262144}, and W = 8, K = 100 (addsub),
// bf16 K = 1000 with swap, f32 K = 40002 (two CTAs); odd K (rows paired from the even address at or before their
// start): bf16 at W = 32, K in {1, 3, 1001, 2047, 4097, 65537}, f16 W = 8 K = 99 (swap), f32 K = 20001. R = 0 (split
// rows have no remnant). Every spec is valid and appears once.
std::vector<KernelSpec> split_test_specs();

// The sample_small draw-test matrix: W in {8, 32}, K in {1, 2, 3, 5, 16, 31}, every element type (R = 0, addsub).
std::vector<KernelSpec> small_test_specs();
// The sample_pairs draw-test matrix, every element type: the whole row a remnant (K = 2), one block after a remnant
// (K = 34), a remnant of 7 columns and 4 blocks (K = 142), a padded remnant (K = 200, W = 32, R = 0), chunks of 2
// blocks (K = 2000) and of 16 (K = 8194, W = 8), and W = 4 (K = 64); both variants. Every spec is valid and appears once.
std::vector<KernelSpec> pairs_test_specs();
// The draw-test matrix of the sample forms beyond one draw from weights (several draws with and without
// replacement, from weights and from logits): six geometries (the whole row a remnant, one block, remnant and
// blocks, a padded remnant, chunks of 2 and of 16 blocks) in f32, and three of them in f64 and bf16 (weights) or
// f16 and bf16 (logits); then sample_split's forms with and without replacement, from weights and from logits, at three
// geometries (one padded tile, two CTAs of W = 32, three CTAs of W = 8). Every spec is valid and appears once.
std::vector<KernelSpec> sample_draws_test_specs();

// The LDA draw-test matrix: W in {4, 8, 16, 32}; K in {1, 3, W + 1, 71, 300}; R in {0, W - 1}; f32 and f64;
// swap and addsub; lda_z and lda_z_doc. Every spec is valid and appears once.
std::vector<KernelSpec> lda_test_specs();

// The LDA baselines' draw-test matrix: alg1 and alg4; K in {1, 3, 33, 64, 71, 300} (alg4: remnant only, one block
// with a remnant of 1, whole blocks only, remnant and blocks); f32 and f64.
std::vector<LdaBaselineSpec> lda_baseline_test_specs();

// W in {4, 8, 16, 32}; K in {1, 71, 1024, 4097}; R = 8 clamped; f32 and f64; swap and addsub; sample, plus
// lda_z and lda_z_doc at K = 1024; the forms of sample (logits, several draws) at K = 1024, W = 16.
std::vector<KernelSpec> compile_test_specs();

// The spec of the README's example: W = 32, K = 1024, R = 8, f32, addsub.
KernelSpec example_spec();

}  // namespace bfly::gen
