{{header_comment}}
#include "bfly/philox.cuh"
#include "bfly/sample_support.cuh"

namespace {{detail_namespace}} {

{{constants}}

{{device_functions}}

}  // namespace {{detail_namespace}}

// One document per group of W lanes: the group draws W tokens of its document at a time. For each round the
// group forms the W x W blocks of products theta[doc] * phi[word of token k] in registers (transposed access to
// the gathered phi rows; theta[doc] is one row shared by the group), builds their butterfly tables (Algorithm 8)
// and searches them (Algorithms 9 and 10). Documents are in CSR form: tokens doc_offsets[m] .. doc_offsets[m + 1]
// - 1 belong to document m, whose topic weights are row m of theta. The uniform of token t is the same as in the
// paper's lane-per-document kernel (lda_z), so both draw the same topics up to rounding at a boundary.
// With topic_counts set, the draws follow collapsed Gibbs sampling's conditional instead: each token's own
// current topic (z on entry) is left out of the counts behind theta and phi (docs/LDA.md, the collapsed z-step).
{{launch_contract}}
extern "C" __global__ void __launch_bounds__({{threads_per_cta}})
{{kernel_signature}}
  using namespace {{detail_namespace}};
  {{launch_check}}
  // Group q of W lanes works on document m = q; lane r takes tokens r, r + W, r + 2W, ... of it.
  const int r = static_cast<int>(threadIdx.x) & (W - 1);
  const long long m = static_cast<long long>(blockIdx.x) * GROUPS + threadIdx.x / W;
  const long long begin = m < D ? doc_offsets[m] : 0;
  const int n = m < D ? static_cast<int>(doc_offsets[m + 1] - begin) : 0;  // tokens of the group's document
  {{shared_memory}}
  {{stage_theta}}

  // Rounds of W tokens; a group whose document is done (or that has none) keeps taking part in the shuffles
  // until every group of the warp is done, with no token (c = -1: weights read as zeros, nothing written).
  for (int first = 0; __any_sync(FULL, first < n); first += W) {
    const bool has_token = first + r < n;
    const long long token = begin + (has_token ? first + r : 0);
    const int c = has_token ? words[token] : -1;  // this lane's word; -1: no token
    const T* const my_phi = phi + (c >= 0 ? c : 0) * ld_phi;
    // Algorithm 8 lines 2-4: every lane learns every lane's word.
    int c_warp[W];
#pragma unroll
    for (int k = 0; k < W; ++k) c_warp[k] = __shfl_sync(FULL, c, k, W);
    T running = T(0);  // running total of this token's weights: remnant, then block by block

    // ---- Pass 1: totals (Algorithm 8, keeping only the last row of each block's table) ----
    {{pass1}}

    const T total = running;
    // The collapsed conditional: with the token left out of the counts, its own topic's weight is `excess` less
    // than the passes formed it (bfly::own_topic_excess), so the draw is from a total that much smaller.
    const int own = topic_counts != nullptr && c >= 0 ? z[token] : -1;
    const T excess = own >= 0 && own < K
                         ? bfly::own_topic_excess(theta_row[own], my_phi[own], static_cast<long long>(n), alpha_sum,
                                                  topic_counts[own], v_beta)
                         : T(0);
    const T total_drawn = total - excess;
    const bool valid = c >= 0 && bfly::valid_total(total) && bfly::valid_total(total_drawn);

    // ---- Pass 2: one uniform per token (docs/DESIGN.md section 5), then Algorithm 9 and Algorithm 10 ----
    const T u = bfly::uniform_from_bits(bfly::philox_bits(seed, static_cast<unsigned long long>(token), 0u, iteration), T());
    const T target = valid ? bfly::scaled_uniform(u, total_drawn) : T(0);  // u' = u * sum, kept below sum
    int draw = 0;
    {{pass2}}
    // The collapsed conditional's prefix sums are the passes' up to topic own and `excess` lower from there on:
    // a search that found a topic before own stands, and one that found own or later is made again with the
    // target raised by the excess (it finds the same topic or a later one). The group searches together.
    const bool search_again = valid && excess > T(0) && draw >= own;
    if (__any_sync(FULL, search_again)) {
      const T raised_target = search_again ? target + excess : target;
      const int first_draw = draw;
      {
        const T target = raised_target;
        {{pass2}}
      }
      if (!search_again) draw = first_draw;
    }

    // ---- Output, once per token ----
    if (has_token) {
      if (valid) {
        // Add/subtract rounding can land a search on a zero weight; such a token is drawn again
        // sequentially (Algorithms 1 and 2), so a zero-weight topic is never drawn.
        if (draw < 0 || !(bfly::product(theta_row[draw], my_phi[draw]) - (draw == own ? excess : T(0)) > T(0)))
          draw = bfly::sequential_draw_products(theta_row, my_phi, K, u, own, excess);
        z[token] = draw;
      } else {
        z[token] = -1;
        bfly::report_invalid_row(invalid_tokens, token);
      }
    }
  }
}
