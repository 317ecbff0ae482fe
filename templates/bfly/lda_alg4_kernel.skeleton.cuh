{{header_comment}}
#include "bfly/philox.cuh"
#include "bfly/sample_support.cuh"

namespace {{detail_namespace}} {

{{constants}}

{{device_functions}}

}  // namespace {{detail_namespace}}

// Algorithm 4: one document per lane, the W = 32 lanes of a warp working on 32 consecutive documents together.
// For each token, the warp forms the products theta[doc] * phi[word] of every W x W block with transposed access
// (the lanes read W consecutive values of one row at a time), transposes them in registers (Figure 2) so that
// each lane holds its own token's products, and stores the running sums in p; then each lane searches its own
// column of p (Algorithm 3). Documents are in CSR form as for Algorithm 1; p[k * D + m] is P[k] of document m,
// holding the running sums of the last token drawn. Sorting documents by length keeps the lanes equally busy.
{{launch_contract}}
extern "C" __global__ void __launch_bounds__({{threads_per_cta}})
{{kernel_signature}}
  using namespace {{detail_namespace}};
  {{launch_check}}
  // Algorithm 4 lines 3-6: group q of W lanes (a warp), lane r, document m = q * W + r.
  const int r = static_cast<int>(threadIdx.x) & (W - 1);
  const long long m = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
  const long long group_first_doc = m - r;
  const T* const thetas = theta + group_first_doc * ld_theta;  // row k of the group starts at thetas + k * ld_theta
  // This lane's theta row counted from the group's first. Lanes past the last document still take part in every
  // shuffle; they stand in with the group's first document and word 0, and their products are never used.
  const int theta_row_in_group = m < D ? r : 0;
  const T* const my_theta = thetas + theta_row_in_group * ld_theta;
  const long long begin = m < D ? doc_offsets[m] : 0;
  const int n = m < D ? static_cast<int>(doc_offsets[m + 1] - begin) : 0;  // N[m]: tokens of this lane's document
  T* const p_column = p + m;  // P[k] of this document at p_column[k * D] (written only while m < D has a token)

  // Algorithm 4 line 8 (Algorithm 5, theta cached per lane) is left out: a cache of K values per lane would live
  // in local memory for large K, so theta is read with the same transposed access for every token instead.

  // Algorithm 4 lines 9-11 and 16, the master index: every lane stays in the loop until the warp's longest
  // document is done, repeating its own last token (not drawn again) so that all lanes take part in the shuffles.
  for (int i_master = 0; __any_sync(FULL, i_master < n); ++i_master) {
    const bool drawing = i_master < n;  // this lane has a token of its own in this round
    const long long token = begin + (drawing ? i_master : (n > 0 ? n - 1 : 0));
    // Algorithm 6 line 2: c = w[m][i], this lane's word (word 0 stands in for a lane without any token).
    const int c = n > 0 ? words[token] : 0;
    const T* const my_phi = phi + static_cast<long long>(c) * ld_phi;
    // Algorithm 6 line 6: the running sum of this token's products, remnant first, then block by block.
    T sum = T(0);
    {{remnant}}
    {{blocks}}
    if (!drawing) continue;
    // A token whose weights are all zero (or not finite) has no topic to draw: -1, and reported.
    if (!bfly::valid_total(sum)) {
      z[token] = -1;
      bfly::report_invalid_row(invalid_tokens, token);
      continue;
    }
    // Algorithm 4 lines 13-15: search the table p_local[m] (Algorithm 3) and store the topic.
    z[token] = search_partial_sums(p_column, D, token_target(seed, token, iteration, sum));
  }
}
