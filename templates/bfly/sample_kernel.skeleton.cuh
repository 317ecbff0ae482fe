{{header_comment}}
#include "bfly/philox.cuh"
#include "bfly/sample_support.cuh"

namespace {{detail_namespace}} {

{{constants}}

{{device_functions}}

}  // namespace {{detail_namespace}}

// Algorithm 7: one thread per row; groups of W lanes load W x W blocks together (transposed access), build
// the butterfly-patterned table of each block in registers, and search it.
{{launch_contract}}
extern "C" __global__ void __launch_bounds__({{threads_per_cta}}{{min_ctas_per_sm}})
{{kernel_signature}}
  using namespace {{detail_namespace}};
  {{launch_check}}
  bfly::let_next_launch_start();  // sample_split over the batch's last rows may overlap this launch's end
  // Algorithm 7 lines 3-5: group q of W lanes, lane r, row m = q * W + r.
  const int r = static_cast<int>(threadIdx.x) & (W - 1);
  const long long m = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
  const long long group_first_row = m - r;
  // Rows of this group that exist; lanes past the last row still take part in every shuffle.
  const int rows_left = M - group_first_row < W ? static_cast<int>(M - group_first_row) : W;
  const T* const rows = weights + group_first_row * ld;  // row k of the group starts at rows + k * ld
  const T* const my_row = weights + m * ld;               // only dereferenced when m < M
  unsigned int screen = 0u;  // pass 1's screen: the largest weight pattern this lane loaded (docs/DESIGN.md section 6)
  {{S}} running = {{S}}(0);      // running total of this lane's row: remnant, then block by block
  {{shared_memory}}

  // ---- Pass 1: totals (Algorithm 8, keeping only the last row of each block's table) ----
  {{pass1}}

  // ---- Which rows can be sampled (docs/DESIGN.md section 6) ----
  {{screen_verdict}}
  const {{S}} total = running;
  const bool valid = m < M && !bad_row && bfly::valid_total(total);

  // ---- Pass 2: one uniform per row (docs/DESIGN.md section 5), then Algorithm 9 and Algorithm 10 ----
  const {{S}} u = bfly::uniform_from_bits(bfly::philox_bits(seed, static_cast<unsigned long long>(m), 0u, iteration), {{S}}());
  const {{S}} target = valid ? bfly::scaled_uniform(u, total) : {{S}}(0);  // u' = u * sum, kept below sum
  int draw = 0;
  {{pass2}}

  // ---- Output ----
  {{output}}
}
