// Helpers of the kernels that draw several categories per row or draw from logits (docs/DESIGN.md section 11):
// the exponential both the GPU and the CPU execution round alike, the group maximum, the weight of a logit, the
// Philox counter word of a draw, and the sequential draw that skips the categories a row has already drawn.
// An include guard rather than #pragma once, for the same reason as bfly/sample_support.cuh.
#ifndef BFLY_DRAWS_SUPPORT_CUH
#define BFLY_DRAWS_SUPPORT_CUH

namespace bfly {

// e^t in float, rounded the same way on the GPU and in the CPU execution: Cody-Waite reduction t = n ln 2 + f with
// |f| <= ln 2 / 2, a degree-7 Taylor polynomial in fmaf (exact fused operations on both), and the exact scaling by
// 2^n in two steps (so that 2^n below the normal range still scales exactly). Relative error about 2^-23. e^t
// below 2^-150 (t < -104, -inf, NaN) is 0; t > 88 is not expected (the weights' exponents are <= 0).
__device__ __forceinline__ float exp_rounded(float t) {
  if (!(t >= -104.0f)) return 0.0f;
  const float n = rintf(__fmul_rn(t, 1.44269502f));     // t / ln 2, to the nearest integer
  float f = fmaf(n, -0.693145752f, t);                   // t - n * ln 2 (high part, exact)
  f = fmaf(n, -1.42860677e-06f, f);                      // ... - n * (ln 2 - high part)
  float p = 1.98412701e-04f;                             // 1/7!
  p = fmaf(p, f, 1.38888892e-03f);                       // 1/6!
  p = fmaf(p, f, 8.33333377e-03f);                       // 1/5!
  p = fmaf(p, f, 4.16666679e-02f);                       // 1/4!
  p = fmaf(p, f, 1.66666672e-01f);                       // 1/3!
  p = fmaf(p, f, 0.5f);
  p = fmaf(p, f, 1.0f);
  p = fmaf(p, f, 1.0f);
  const int e = static_cast<int>(n), half = e / 2;       // e in [-151, 128]: both halves are normal exponents
  const float low = __uint_as_float(static_cast<unsigned int>(half + 127) << 23);
  const float high = __uint_as_float(static_cast<unsigned int>(e - half + 127) << 23);
  return __fmul_rn(__fmul_rn(p, low), high);
}

// -inf in float: the logit of a category that is never drawn, and the maximum of a row before its first logit.
__device__ __forceinline__ float minus_infinity() { return __uint_as_float(0xff800000u); }

// A logit is usable when it is a number below +inf (-inf is a category of weight zero; NaN and +inf make the
// row invalid, as softmax is undefined there).
__device__ __forceinline__ bool valid_logit(float x) { return x <= 3.402823466e+38f; }

// The weight of logit x in its row: e^((x - row_max) / T), with scale = 1 / T. -inf (and a row whose maximum is
// -inf, which has no weight at all) gives 0 exactly.
__device__ __forceinline__ float logit_weight(float x, float row_max, float scale) {
  if (!(x >= -3.402823466e+38f)) return 0.0f;
  return exp_rounded(__fmul_rn(x - row_max, scale));
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

}  // namespace bfly

#endif  // BFLY_DRAWS_SUPPORT_CUH
