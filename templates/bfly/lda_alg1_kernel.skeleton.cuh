{{header_comment}}
#include "bfly/philox.cuh"
#include "bfly/sample_support.cuh"

namespace {{detail_namespace}} {

{{constants}}

{{device_functions}}

}  // namespace {{detail_namespace}}

// Algorithm 1 lines 3-4: one thread per document m, which draws the topics of its tokens one after the other.
// Documents are in CSR form: tokens doc_offsets[m] .. doc_offsets[m + 1] - 1 belong to document m, whose topic
// weights are row m of theta. p is the paper's table of partial sums, one column of K per document
// (p[k * D + m], so that the stores of a warp are coalesced); it holds the running sums of the last token drawn.
{{launch_contract}}
extern "C" __global__ void __launch_bounds__({{threads_per_cta}})
{{kernel_signature}}
  using namespace {{detail_namespace}};
  {{launch_check}}
  const long long m = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
  if (m >= D) return;
  const T* const theta_row = theta + m * ld_theta;
  T* const p_column = p + m;  // P[k] of this document at p_column[k * D]
  for (long long token = doc_offsets[m]; token < doc_offsets[m + 1]; ++token) {
    const T* const phi_row = phi + static_cast<long long>(words[token]) * ld_phi;
    // Algorithm 1 lines 6-13, the products fused into the partial sums: sum += theta[m, k] * phi[w[m][i], k],
    // p[m][i][k] := sum, reading both rows sequentially (no transposed access).
    T sum = T(0);
    for (int k = 0; k < K; ++k) {
      sum += bfly::product(theta_row[k], phi_row[k]);
      p_column[k * D] = sum;
    }
    // A token whose weights are all zero (or not finite) has no topic to draw: -1, and reported.
    if (!bfly::valid_total(sum)) {
      z[token] = -1;
      bfly::report_invalid_row(invalid_tokens, token);
      continue;
    }
    // Algorithm 1 lines 14-17: search the table p[m][i] (Algorithm 3) and store the topic.
    z[token] = search_partial_sums(p_column, D, token_target(seed, token, iteration, sum));
  }
}
