{{header_comment}}
#include "bfly/philox.cuh"
#include "bfly/sample_support.cuh"
#include "bfly/draws_support.cuh"
#include "bfly/sample_split_support.cuh"

namespace {{detail_namespace}} {

{{constants}}

{{device_functions}}

}  // namespace {{detail_namespace}}

// One row over CTAS_PER_ROW CTAs (docs/DESIGN.md section 12). A row is cut into PARTS parts of W consecutive
// {{column_noun}}s; W parts side by side make a W x W tile, which a group of W lanes loads with the paper's transposed
// access (Algorithm 8 lines 13-17) and turns into a butterfly table (lines 18-30): row W-1 of lane r's table is the
// total of part r of the tile. Level 1 of the row's table is these part totals (in part_totals); the last CTA of
// the row to finish searches level 1 (Algorithm 9 over the part totals) and then, in the chosen part's tile, the
// butterfly table itself (Algorithm 10), GROUPS draws at a time. Every sum is formed in an order the spec fixes,
// never the launch, so draw d of row m depends only on (seed, first_row + m, d, iteration), the spec and the row.
{{launch_contract}}
extern "C" __global__ void __launch_bounds__({{threads_per_cta}}{{min_ctas_per_sm}})
{{kernel_signature}}
  using namespace {{detail_namespace}};
  {{launch_check}}
  // Launched to overlap the row kernel's end, this grid ends after it: its last CTA waits for it before it draws.
  if (blockIdx.x == gridDim.x - 1) bfly::wait_for_previous_launch();
  const long long m = static_cast<long long>(blockIdx.x) / CTAS_PER_ROW;  // this CTA's row: first_row + m of the batch
  if (m >= M) return;  // a grid larger than the contract's: the extra CTAs write nothing
  const int slice = static_cast<int>(blockIdx.x % CTAS_PER_ROW);  // which TILES_PER_CTA tiles of the row
  const int r = static_cast<int>(threadIdx.x) & (W - 1);           // lane within the group
  const int group = static_cast<int>(threadIdx.x) / W;
  const T* const row = {{input}} + m * ld;
  S* const row_part_totals = part_totals + m * SCRATCH_PER_ROW;
  {{form_state}}
  __shared__ S scan[THREADS];  // the last CTA's inclusive scan of the chunk totals
  __shared__ int flags[2];  // [0]: the row has an unusable {{element_noun}}; [1]: this CTA searches the row
  if (threadIdx.x == 0) flags[0] = 0;
  __syncthreads();
  bool bad = false;  // this lane loaded an unusable {{element_noun}}

  // ---- Level 1: the part totals of this CTA's tiles (Algorithm 8, keeping row W-1 of each table) ----
  {{pass1}}

  // ---- The row's CTAs count themselves in; the last one to arrive searches the row ----
  if (bad) flags[0] = 1;
  __threadfence();  // this CTA's part totals are visible to every CTA before it counts itself in
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned long long before = atomicAdd(&arrivals[m], bfly::kArrived | (flags[0] ? bfly::kArrivedBad : 0ull));
    const bool last = (before & 0xffffffffull) == CTAS_PER_ROW - 1;
    flags[1] = last;
    if (last) {
      flags[0] = flags[0] || (before >> 32) != 0;  // any CTA of the row saw an unusable {{element_noun}}
      arrivals[m] = 0ull;                           // ready for the next launch
    }
  }
  __syncthreads();
  if (!flags[1]) return;
  __threadfence();  // the other CTAs' part totals, published before their atomics, are read after ours

  // ---- Level 1 search (Algorithm 9 lines 7-12 over the part totals) ----
  // Thread t sums the CHUNK_PARTS part totals of chunk t in order (all loaded first, so their L2 latencies
  // overlap; parts past PARTS read as 0, and x + 0 is x); an inclusive scan over the chunks in a fixed pattern
  // (Hillis and Steele) gives the running total at the end of every chunk.
  const int first_part = static_cast<int>(threadIdx.x) * CHUNK_PARTS;
  {{load_chunk_parts}}
  S chunk_total = S(0);
#pragma unroll
  for (int i = 0; i < CHUNK_PARTS; ++i) chunk_total += chunk_parts[i];
  const S chunk_end = bfly::block_inclusive_scan<THREADS>(scan, chunk_total);
  const S total = scan[THREADS - 1];
  const bool valid = !flags[0] && bfly::valid_total(total);
  const S chunk_start = threadIdx.x > 0 ? scan[threadIdx.x - 1] : S(0);

  // ---- The draws, a round at a time: slot g of a round is searched in level 1 by every thread, in level 2 by group g ----
  __shared__ S uniforms[GROUPS];     // u of each slot (docs/DESIGN.md sections 5 and 11)
  __shared__ S targets[GROUPS];      // u' = u * total, kept below total
  __shared__ int chosen_part[GROUPS];
  __shared__ S part_targets[GROUPS];  // u' less the running total before the chosen part, below the part's total
  __shared__ int found[GROUPS];       // the category level 2 found for each slot
  // The first group of this thread's warp: a warp searches in level 2 while any of its groups has a slot, so that
  // every lane of the warp takes part in the shuffles.
  const int warp_first_group = static_cast<int>(threadIdx.x) / 32 * (32 / W);
  {{draws_state}}
  for (int first = 0; valid && first < num_samples;) {
    // The table this round searches: level 1 as built (its total and this thread's chunk of it).
    S table_total = total, table_chunk_start = chunk_start, table_chunk_end = chunk_end, table_chunk_total = chunk_total;
    {{round_table}}
    const int batch = {{round_batch}};
    if (static_cast<int>(threadIdx.x) < batch) {
      {{slot_word}}
      const S u = bfly::uniform_from_bits(bfly::philox_bits(seed, bfly::batch_row(first_row, m), word, iteration), S());
      uniforms[threadIdx.x] = u;
      targets[threadIdx.x] = bfly::scaled_uniform(u, table_total);
      chosen_part[threadIdx.x] = 0;
      part_targets[threadIdx.x] = S(0);
    }
    __syncthreads();
    // The chunk holding u' is the first whose running total exceeds it (the scan never decreases). Its thread walks
    // the chunk's parts with the sums that formed its chunk total, relative to the chunk's start, so it finds one.
    for (int b = 0; b < batch; ++b) {
      const S target = targets[b];
      if (!(target < table_chunk_end) || target < table_chunk_start) continue;
      S within = target - table_chunk_start;
      if (!(within < table_chunk_total)) within = bfly::value_below(table_chunk_total);
      S run = S(0);
      bool found_part = false;
#pragma unroll
      for (int i = 0; i < CHUNK_PARTS; ++i) {
        const S part = {{walk_part}};
        const S next = run + part;
        if (!found_part && within < next) {
          const S in_part = within - run;
          chosen_part[b] = first_part + i;
          part_targets[b] = in_part < part ? in_part : bfly::value_below(part);
          found_part = true;
        }
        run = next;
      }
    }
    __syncthreads();

    // ---- Level 2: Algorithm 10 in the chosen part's tile ----
    // Group g reloads the tile of slot g and builds its table exactly as level 1 did, so row W-1 of lane p's table
    // is part p's total again; the lane of the chosen part searches its block, the others search for 0.
    if (warp_first_group < batch) {
      const bool drawing = group < batch;
      const int part = drawing ? chosen_part[group] : 0;
      const int tile = part / W, owner = part % W;
      const bool searcher = drawing && r == owner;
      S a[W];
      {{level2_table}}
      const S t = searcher ? {{level2_target}} : S(0);
      {{level2_search}}
      if (searcher) {
        {{level2_draw}}
        // Add/subtract rounding can land a search on a zero weight; such a draw is made again sequentially within
        // the chosen part (Algorithms 1 and 2 over its W {{column_noun}}s, from the target within it), so a zero-weight
        // category is never drawn; over the whole row only where the part has no positive weight left.
        if ({{unusable_draw}}) {
          draw = {{redraw_within_part}};
          if (draw < 0) draw = {{sequential_draw}};
        }
        found[group] = draw;
      }
    }
    __syncthreads();
    {{accept_round}}
  }
  {{write_draws}}
  if (!valid) {
    for (int d = static_cast<int>(threadIdx.x); d < num_samples; d += THREADS) out[m * num_samples + d] = -1;
    if (threadIdx.x == 0) bfly::report_invalid_row(invalid_rows, static_cast<long long>(bfly::batch_row(first_row, m)));
  }
}
