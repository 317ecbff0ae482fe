{{header_comment}}
#include "bfly/philox.cuh"
#include "bfly/sample_support.cuh"
#include "bfly/draws_support.cuh"

namespace {{detail_namespace}} {

{{constants}}

{{device_functions}}

}  // namespace {{detail_namespace}}

// Algorithm 7 with num_samples draws per row: one thread per row; groups of W lanes load W x W blocks together
// (transposed access) and build each block's butterfly-patterned table in registers. Pass 1 runs once per row;
// pass 2 (Algorithms 9 and 10) runs once per draw, each with its own uniform, over the same running totals.
{{launch_contract}}
extern "C" __global__ void __launch_bounds__({{threads_per_cta}}{{min_ctas_per_sm}})
{{kernel_signature}}
  using namespace {{detail_namespace}};
  {{launch_check}}
  {{draws_check}}
  // Algorithm 7 lines 3-5: group q of W lanes, lane r, row m = q * W + r.
  const int r = static_cast<int>(threadIdx.x) & (W - 1);
  const long long m = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
  const long long group_first_row = m - r;
  // Rows of this group that exist; lanes past the last row still take part in every shuffle.
  const int rows_left = M - group_first_row < W ? static_cast<int>(M - group_first_row) : W;
  const T* const rows = {{input}} + group_first_row * ld;  // row k of the group starts at rows + k * ld
  const T* const my_row = {{input}} + m * ld;               // only dereferenced when m < M
  unsigned int bad = 0;  // bit k: this lane loaded an unusable {{element_noun}} of row k
  S running = S(0);      // running total of this lane's row: remnant, then block by block
  {{input_state}}
  {{shared_memory}}

  // ---- Pass 1: totals (Algorithm 8, keeping only the last row of each block's table) ----
  {{pass1}}

  // ---- Which rows can be sampled (docs/DESIGN.md section 6) ----
  {{combine_bad}}
  {{finish_pass1}}
  const S total = running;
  const bool valid = m < M && !bad_row && bfly::valid_total(total);
  {{weight_of}}
  {{ran_out}}
  {{drawn_state}}

  // ---- Pass 2 once per draw d: its uniform (docs/DESIGN.md sections 5 and 11), Algorithm 9, Algorithm 10 ----
  for (int d = 0; d < num_samples; ++d) {
    {{draw}}
  }

  // ---- Invalid rows ----
  if (m < M && (!valid || ran_out)) bfly::report_invalid_row(invalid_rows, m);
}
