// LdaBaselineSpec: the paper's LDA z-step baselines that bfly generates for comparison with its own kernels
// (Algorithm 1 with Algorithm 3; Algorithm 4 with Algorithms 6 and 3), their validation and self-describing names.
//
// A type of its own rather than more KernelSpec operations: a baseline has no group width, remnant threshold or
// butterfly variant to choose (KernelSpec's W, R and variant would be fixed or meaningless for it), and its kernel
// takes a scratch table p that bfly's kernels do not (see generate.hpp), so it must never be what Sampler or
// LdaZStep pick. Its names cannot be taken for KernelSpec names (they lack the w, r and variant fields).
#pragma once

#include "bfly/spec/kernel_spec.hpp"

#include <string>
#include <string_view>

namespace bfly::gen {

// alg1: Algorithm 1 with the binary search of Algorithm 3; one thread per document reads its theta row and each
//       token's phi row sequentially and stores the running sums in p.
// alg4: Algorithm 4 with Algorithms 6 and 3, W = 32 (a warp, one document per lane): transposed access to theta
//       and phi, the products of each 32 x 32 block transposed in registers (Figure 2), running sums stored in p.
enum class LdaBaseline { alg1, alg4 };

std::string_view name_of(LdaBaseline baseline);         // "alg1", "alg4"
LdaBaseline parse_lda_baseline(std::string_view text);  // throws bfly::Error listing the allowed values

struct LdaBaselineSpec {
  LdaBaseline algorithm = LdaBaseline::alg4;
  int K = 1024;  // topics, 1 .. KernelSpec::kMaxK
  ElementType type = ElementType::f32;

  static constexpr int kAlg4Width = 32;  // Algorithm 4's W: the lanes of a warp, one document each

  // Throws bfly::Error naming the field, the value and what is allowed.
  void validate() const;

  // Algorithm 4's split of the K topics: a leading remnant of K mod 32 topics, then whole 32 x 32 blocks.
  int alg4_remnant() const { return K % kAlg4Width; }
  int alg4_blocks() const { return K / kAlg4Width; }

  friend bool operator==(const LdaBaselineSpec&, const LdaBaselineSpec&) = default;
};

// "bfly_lda_alg1_f32_k1024", "bfly_lda_alg4_f64_k71": the algorithm, the type and K.
std::string kernel_name(const LdaBaselineSpec& spec);

// The inverse of kernel_name; throws bfly::Error when `name` is not an LDA baseline kernel name.
LdaBaselineSpec parse_lda_baseline_name(std::string_view name);

// The family of the baseline (lda_alg1 or lda_alg4) and its launch: one document per thread, CTAs of 128 threads.
const KernelFamily& family_of(const LdaBaselineSpec& spec);
LaunchGeometry launch_geometry(const LdaBaselineSpec& spec);

// "baseline=alg4 K=71 type=f64"
std::string describe(const LdaBaselineSpec& spec);

}  // namespace bfly::gen
