{{header_comment}}
#include "bfly/philox.cuh"
#include "bfly/sample_support.cuh"

namespace {{detail_namespace}} {

{{constants}}

}  // namespace {{detail_namespace}}

// Short rows (docs/DESIGN.md section 12): a group of W lanes stages GROUP_ROWS = W * ROWS_PER_LANE consecutive rows
// in shared memory with contiguous loads (lane r loads elements r, r + W, r + 2W, ... of the group's rows, so each
// step of the W lanes reads W consecutive weights when ld = K), then every lane draws ROWS_PER_LANE rows, row
// j * W + r of the group, with a running sum and a linear search (Algorithms 1 and 2; for K this small a butterfly
// table saves nothing). The uniform of row m is Philox(seed; m, 0, iteration) and the sums run over the row in
// column order, so a draw depends neither on the packing nor on the launch.
{{launch_contract}}
extern "C" __global__ void __launch_bounds__({{threads_per_cta}})
{{kernel_signature}}
  using namespace {{detail_namespace}};
  {{launch_check}}
  const int r = static_cast<int>(threadIdx.x) & (W - 1);  // lane within the group
  const int group = static_cast<int>(threadIdx.x) / W;
  const long long group_first_row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + group * GROUP_ROWS;
  __shared__ S stage[GROUPS][GROUP_ROWS * PITCH];  // row k of the group at stage[group][k * PITCH], widened to S
  S* const rows = stage[group];

  // ---- Stage the group's rows: LOADS_PER_LANE loads per lane, all issued before any is used ----
  {{stage}}
  __syncwarp();  // the group's rows are staged before any lane reads another lane's loads

  // ---- Draw: lane r takes rows r, r + W, ... of the group (a stride of PITCH, odd: no bank conflicts) ----
#pragma unroll
  for (int j = 0; j < ROWS_PER_LANE; ++j) {
    const int k = j * W + r;
    const long long m = group_first_row + k;
    if (m >= M) break;
    const S* const x = rows + k * PITCH;
    // Algorithm 1: the row's total, checking every weight (docs/DESIGN.md section 6).
    S total = S(0);
    bool bad = false;
#pragma unroll
    for (int c = 0; c < K; ++c) {
      bad |= !bfly::valid_weight(x[c]);
      total += x[c];
    }
    if (bad || !bfly::valid_total(total)) {
      out[m] = -1;
      bfly::report_invalid_row(invalid_rows, m);
      continue;
    }
    // Algorithm 2: the first column whose running sum exceeds u' = u * total (one uniform per row, section 5). The
    // sums repeat the total's exactly and u' < total, so a column is always found, and never one of weight zero.
    const S u = bfly::uniform_from_bits(bfly::philox_bits(seed, static_cast<unsigned long long>(m), 0u, iteration), S());
    const S target = bfly::scaled_uniform(u, total);
    S running = S(0);
    int draw = K - 1;
#pragma unroll
    for (int c = 0; c < K; ++c) {
      running += x[c];
      if (target < running) {
        draw = c;
        break;
      }
    }
    out[m] = draw;
  }
}
