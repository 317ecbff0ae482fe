// Helpers of the kernels that draw several categories per row or draw from logits (docs/DESIGN.md section 11):
// the exponential both the GPU and the CPU execution round alike, the group maximum, the weight of a logit, the
// Philox counter word of a draw, and the sequential draw that skips the categories a row has already drawn.
// An include guard rather than #pragma once, for the same reason as bfly/sample_support.cuh.
#ifndef BFLY_DRAWS_SUPPORT_CUH
#define BFLY_DRAWS_SUPPORT_CUH

namespace bfly {

// log2(e): a logit's weight e^(t / T) is 2^(t * log2(e) / T).
constexpr double kLog2e = 1.4426950408889634;

// 2^y in float, rounded the same way on the GPU and in the CPU execution, for y <= 0 (a logit's exponent below its
// row's maximum). y = n + f with n an integer and |f| <= 1/2: adding 1.5 * 2^23 rounds y to n, whose low bits the
// float then holds, and subtracting it back leaves n exactly; 2^f is a degree-6 polynomial fitted for relative
// error in fmaf (exact fused operations on both executions), and 2^n enters as n added to the exponent field.
// Within one unit in the last place of the exact 2^y for every float y in [-125, 0] (checked exhaustively when it
// was written). Below 2^-125 (y < -125, -inf, NaN) it is 0, which keeps the result a normal float: about 15
// instructions, where e^t by Cody-Waite reduction and a degree-7 Taylor polynomial took about 25.
__device__ __forceinline__ float exp2_rounded(float y) {
  if (!(y >= -125.0f)) return 0.0f;
  const float shifted = y + 12582912.0f;                 // 1.5 * 2^23 + n: n in the low bits of the float
  const float n = shifted - 12582912.0f;                 // round(y), exactly
  const float f = y - n;                                 // exact, in [-1/2, 1/2]
  float p = 1.534581243e-04f;
  p = fmaf(p, f, 1.339993090e-03f);
  p = fmaf(p, f, 9.618489072e-03f);
  p = fmaf(p, f, 5.550328642e-02f);
  p = fmaf(p, f, 2.402264625e-01f);
  p = fmaf(p, f, 6.931471825e-01f);
  p = fmaf(p, f, 1.0f);                                  // 2^f in [2^-1/2, 2^1/2]: exponent field 126 or 127
  return __uint_as_float(__float_as_uint(p) + (__float_as_uint(shifted) << 23));  // n >= -125: still normal
}

// -inf in float: the logit of a category that is never drawn, and the maximum of a row before its first logit.
__device__ __forceinline__ float minus_infinity() { return __uint_as_float(0xff800000u); }

// A logit is usable when it is a number below +inf (-inf is a category of weight zero; NaN and +inf make the
// row invalid, as softmax is undefined there).
__device__ __forceinline__ bool valid_logit(float x) { return x <= 3.402823466e+38f; }

// The weight of logit x in its row: e^((x - row_max) / T) = 2^((x - row_max) * scale), with scale = log2(e) / T
// (rounded to float once per launch). A -inf logit (x - row_max = -inf) and a row whose maximum is -inf (NaN) give
// 0 exactly, as does a weight below 2^-125 of the row's largest.
__device__ __forceinline__ float logit_weight(float x, float row_max, float scale) {
  return exp2_rounded(__fmul_rn(x - row_max, scale));
}

// A total summed under the maximum `old_max`, rescaled to `new_max` >= old_max (the online maximum).
__device__ __forceinline__ float rescale(float total, float old_max, float new_max, float scale) {
  return __fmul_rn(total, logit_weight(old_max, new_max, scale));
}

// sample_split_logits: a target within a part whose total was rescaled by `factor` (0 < factor <= 1, the part's
// maximum relative to the row's) when the part was chosen, as a target in the part's own, unscaled table: divided
// back and kept below the part's unscaled total.
__device__ __forceinline__ float unscaled_target(float target, float factor, float part_total) {
  const float t = target / factor;
  return t < part_total ? t : value_below(part_total);
}

// The maximum of x over the lanes of `group` (a mask of W consecutive lanes): floats ordered as integers, one
// warp reduction (redux.sync).
__device__ __forceinline__ float group_max(unsigned int group, float x) {
  const int bits = static_cast<int>(__float_as_uint(x));
  const int ordered = bits >= 0 ? bits : bits ^ 0x7fffffff;  // negative floats count down: flip their magnitude
  const int top = __reduce_max_sync(group, ordered);
  return __uint_as_float(static_cast<unsigned int>(top >= 0 ? top : top ^ 0x7fffffff));
}

// The Philox counter word of attempt `attempt` of draw `draw` (docs/DESIGN.md section 5): the draw itself for the
// first attempt, so draw 0 uses the single-draw kernel's uniform; redraws without replacement add attempt * 2^24.
__device__ __forceinline__ unsigned int draw_word(int draw, int attempt) {
  return static_cast<unsigned int>(draw) | (static_cast<unsigned int>(attempt) << 24);
}

// Whether category k is one of the first `count` draws of this row.
__device__ __forceinline__ bool already_drawn(int k, const int* drawn, int count) {
  for (int i = 0; i < count; ++i)
    if (drawn[i] == k) return true;
  return false;
}

// sample_split's distinct draws (docs/DESIGN.md section 12): zeroes, in lane r's column of the tile `tile` of a row
// (a[k] is weight r of part k, category tile * W * W + k * W + r), the categories among the `count` drawn, so that
// the table built from `a` is the table of the categories left.
template <int W, typename S>
__device__ __forceinline__ void exclude_drawn(S (&a)[W], int tile, int r, const int* drawn, int count) {
  unsigned int mask = 0u;  // bit k: a[k] was drawn
  for (int j = 0; j < count; ++j) {
    const int c = drawn[j] - tile * (W * W);
    if (c >= 0 && c < W * W && c % W == r) mask |= 1u << (c / W);
  }
#pragma unroll
  for (int k = 0; k < W; ++k)
    if ((mask >> k) & 1u) a[k] = S(0);
}

// The total of part `part` in the table of the categories left: `fixed_total[j]` when the part is `fixed_part[j]`
// (a part holding a drawn category, its total formed again without it), else its total in the row's table.
template <typename S>
__device__ __forceinline__ S part_left(int part, S row_total, const int* fixed_part, const S* fixed_total, int fixes) {
  for (int j = 0; j < fixes; ++j)
    if (fixed_part[j] == part) return fixed_total[j];
  return row_total;
}

// sample_split's distinct draws: the draw and attempt slot s of a round searches, the round starting at attempt
// `attempt` of draw `first`. A fresh draw (attempt 0) is followed by attempt 0 of the next draws, GROUPS draws a
// round in a flat row. A draw already redrawn (its row is peaked) has its attempts left in the first slots, then
// attempt 0 of the next draws, so its redraws take one round rather than one each. Attempt `redraws` (the exact draw
// among the categories left) is a round of one slot.
__device__ __forceinline__ void distinct_slot(int s, int first, int attempt, int redraws, int& draw, int& draw_attempt) {
  const int left = attempt == 0 || attempt == redraws ? 1 : redraws - attempt;  // slots of draw `first`
  if (s < left) {
    draw = first;
    draw_attempt = attempt + s;
  } else {
    draw = first + 1 + (s - left);
    draw_attempt = 0;
  }
}

// The slots of a round from (first, attempt): up to `groups`, none past the last draw.
__device__ __forceinline__ int distinct_slots(int first, int attempt, int redraws, int num_samples, int groups) {
  if (attempt == redraws) return 1;
  const int slots = (attempt == 0 ? 1 : redraws - attempt) + (num_samples - first - 1);
  return slots < groups ? slots : groups;
}

// sample_split's distinct draws, after a round of `batch` slots (distinct_slot): each draw takes the first of its
// slots that found a category the row has not drawn, in order; the first draw that found none decides the next
// round, at its next attempt (`redraws`: the exact draw among the categories left; `batch` 0 there when nothing
// positive is left). `next` receives the next round's first draw and its attempt; a row that ran out draws -1 for
// the rest.
__device__ inline void accept_distinct_round(const int* found, int batch, int first, int attempt, int redraws,
                                             int num_samples, int* drawn, int* next) {
  if (attempt == redraws) {
    const int category = batch > 0 ? found[0] : -1;
    if (category < 0) {
      for (int d = first; d < num_samples; ++d) drawn[d] = -1;
      next[0] = num_samples;
    } else {
      drawn[first] = category;
      next[0] = first + 1;
    }
    next[1] = 0;
    return;
  }
  int undecided = first;  // the first draw not made yet
  for (int s = 0; s < batch; ++s) {
    int d, a;
    distinct_slot(s, first, attempt, redraws, d, a);
    if (d < undecided) continue;  // made by an earlier attempt of this round
    if (!already_drawn(found[s], drawn, d)) {
      drawn[d] = found[s];
      undecided = d + 1;
      continue;
    }
    int next_d, next_a;  // the draw found a drawn category: its next attempt, unless this round holds it
    if (s + 1 < batch) distinct_slot(s + 1, first, attempt, redraws, next_d, next_a);
    if (s + 1 < batch && next_d == d) continue;
    next[0] = d;
    next[1] = a + 1;
    return;
  }
  next[0] = undecided;
  next[1] = 0;
}

// The weights of one row as the kernels see them: explicit weights widened to the accumulator, or the weights of
// logits under the row's final maximum.
template <typename T>
struct RowWeights {
  const T* row;
  __device__ __forceinline__ auto operator()(int k) const { return widen(row[k]); }
};
template <typename T>
struct RowLogitWeights {
  const T* row;
  float row_max, scale;
  __device__ __forceinline__ float operator()(int k) const { return logit_weight(widen(row[k]), row_max, scale); }
};

// Algorithms 1 and 2 on one row, skipping the `count` categories in `drawn`: the exact draw from what is left.
// -1 when nothing positive is left. The kernels use it when their butterfly search landed on a zero weight through
// rounding (count 0), and for a draw without replacement whose redraws all found drawn categories.
template <typename S, typename Weight>
__device__ __noinline__ int sequential_draw_excluding(const Weight& weight, int K, S u, const int* drawn, int count) {
  S total = S(0);
  for (int k = 0; k < K; ++k)
    if (!already_drawn(k, drawn, count)) total += weight(k);
  if (!(total > S(0))) return -1;
  const S target = scaled_uniform(u, total);
  S running = S(0);
  int last = -1;  // the last positive category left, for a target that rounding put past the end
  for (int k = 0; k < K; ++k) {
    if (already_drawn(k, drawn, count)) continue;
    const S x = weight(k);
    running += x;
    if (x > S(0)) last = k;
    if (target < running && x > S(0)) return k;
  }
  return last;
}

// The split kernels' redraw (docs/DESIGN.md section 6): where the search of the chosen part's table landed on a zero
// weight through rounding, the draw is made again within that part alone, its categories [begin, end) (clipped to
// [0, K)) in column order skipping the `count` categories in `drawn`: the first whose running total exceeds t, the
// target within the part, or, where rounding left t at or past their sequential total, the last positive one. The
// running total first exceeds t at a category of positive weight, so no zero weight is drawn; -1 when the part has
// no positive weight left. A part is W columns: the whole row, up to 262144 weights, kept one lane for milliseconds.
template <typename S, typename Weight>
__device__ __noinline__ int sequential_draw_within(const Weight& weight, int begin, int end, int K, S t,
                                                   const int* drawn, int count) {
  if (begin < 0) begin = 0;
  if (end > K) end = K;
  S running = S(0);
  int last = -1;  // the last positive category, for a target that rounding put past the part's end
  for (int k = begin; k < end; ++k) {
    if (already_drawn(k, drawn, count)) continue;
    const S x = weight(k);
    if (!(x > S(0))) continue;
    running += x;
    last = k;
    if (t < running) return k;
  }
  return last;
}

}  // namespace bfly

#endif  // BFLY_DRAWS_SUPPORT_CUH
