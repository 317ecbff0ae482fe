// Helpers shared by the generated sampling kernels: weight validity, the scaled-uniform guard, and reporting.
// An include guard rather than #pragma once: the ahead-of-time header pastes this text, and two pasted
// copies (two generated headers in one translation unit) must still define everything once.
#ifndef BFLY_SAMPLE_SUPPORT_CUH
#define BFLY_SAMPLE_SUPPORT_CUH

// The 16-bit storage types (f16, bf16): plain structs of their bits, the same as the host's (bfly/half_types.hpp,
// under the same guard). They are never summed: loads widen them to float, their accumulator.
#ifndef BFLY_HALF_BITS_DEFINED
#define BFLY_HALF_BITS_DEFINED
namespace bfly {
struct half_bits {
  unsigned short bits;
};
struct bf16_bits {
  unsigned short bits;
};
}  // namespace bfly
#endif

namespace bfly {

// A weight as its accumulator type: f32 and f64 are their own; f16 and bf16 widen exactly to float.
__device__ __forceinline__ float widen(float x) { return x; }
__device__ __forceinline__ double widen(double x) { return x; }
__device__ __forceinline__ float widen(bf16_bits x) { return __uint_as_float(static_cast<unsigned int>(x.bits) << 16); }
__device__ __forceinline__ float widen(half_bits x) {
#ifdef __CUDA_ARCH__
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
  return f;
#else
  // The CPU execution (bfly/lockstep.hpp): the same exact conversion, bit by bit.
  const unsigned int sign = static_cast<unsigned int>(x.bits & 0x8000u) << 16;
  const unsigned int exponent = (x.bits >> 10) & 0x1fu, mantissa = x.bits & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  return __uint_as_float(exponent == 31 ? sign | 0x7f800000u | (mantissa << 13)
                                        : sign | ((exponent + 112u) << 23) | (mantissa << 13));
#endif
}

// Two adjacent weights of a row, loaded together by the sample_pairs kernels: one 4-byte load of f16/bf16, one
// 8-byte load of f32, one 16-byte load of f64. For K even the row must start on a pair (the runtime checks the
// pointer and ld); a row of odd K pairs up from the even address at or before its start (pair_phase).
// A pair of 16-bit weights is kept as the 32-bit word it is loaded as (the first weight in the low half), so that a
// select, a zero and pass 1's screen each take one register.
template <typename T>
struct alignas(2 * sizeof(T)) WeightPair {
  T first, second;
};
template <>
struct WeightPair<half_bits> {
  unsigned int bits;
};
template <>
struct WeightPair<bf16_bits> {
  unsigned int bits;
};
template <typename T>
__device__ __forceinline__ WeightPair<T> load_pair(const T* p) {
#ifdef __CUDA_ARCH__
  return *reinterpret_cast<const WeightPair<T>*>(p);
#else
  // The CPU execution reads the same two weights one by one.
  if constexpr (sizeof(T) == 2)
    return WeightPair<T>{static_cast<unsigned int>(p[0].bits) | static_cast<unsigned int>(p[1].bits) << 16};
  else return WeightPair<T>{p[0], p[1]};
#endif
}

// kBytes of a row's pairs, loaded in one load (load_row_pairs).
template <typename T, int kBytes>
struct alignas(kBytes) PairPiece {
  WeightPair<T> pair[kBytes / sizeof(WeightPair<T>)];
};

// A row's N pairs from the whole kBytes pieces it starts on and fills, one load a piece.
template <int kBytes, typename T, int N>
__device__ __forceinline__ void load_row_pieces(WeightPair<T> (&pairs)[N], const T* row) {
  constexpr int kPairsPerPiece = kBytes / static_cast<int>(sizeof(WeightPair<T>));
  const PairPiece<T, kBytes>* const pieces = reinterpret_cast<const PairPiece<T, kBytes>*>(row);
#pragma unroll
  for (int i = 0; i < N / kPairsPerPiece; ++i) {
    const PairPiece<T, kBytes> piece = pieces[i];
#pragma unroll
    for (int j = 0; j < kPairsPerPiece; ++j) pairs[kPairsPerPiece * i + j] = piece.pair[j];
  }
}

// A row's N pairs from the 16-byte pieces that hold its bytes, wherever it starts on a pair: a piece that holds none
// is not loaded, so no load reaches a page the row does not touch. The row's pairs are then picked by its lead (the
// pairs of its first piece before it) with one select a pair for each bit of the lead, not a run-time index into
// registers. The CPU execution forms the same pieces from the row's own pairs (zeros for the bytes outside it, which
// no pick reaches).
template <typename T, int N>
__device__ __forceinline__ void load_row_from_pieces_holding_it(WeightPair<T> (&pairs)[N], const T* row) {
  constexpr int kPairsPerPiece = 16 / static_cast<int>(sizeof(WeightPair<T>));  // 4 of 16-bit weights, 2 of f32
  constexpr int kPieces = (N + 2 * kPairsPerPiece - 2) / kPairsPerPiece;  // at most, with a lead of kPairsPerPiece - 1
  constexpr int kWindowPairs = kPieces * kPairsPerPiece;
  const unsigned long long address = reinterpret_cast<unsigned long long>(row);
  const int lead = static_cast<int>(address % 16) / static_cast<int>(sizeof(WeightPair<T>));
  WeightPair<T> window[kWindowPairs];
#pragma unroll
  for (int p = 0; p < kPieces; ++p) {
    PairPiece<T, 16> piece{};
    if (p * kPairsPerPiece < lead + N) {  // the piece holds a pair of the row
#ifdef __CUDA_ARCH__
      piece = reinterpret_cast<const PairPiece<T, 16>*>(address - address % 16)[p];
#else
      for (int i = 0; i < kPairsPerPiece; ++i) {
        const int j = p * kPairsPerPiece + i - lead;  // the row's pair at place i of the piece
        if (j >= 0 && j < N) piece.pair[i] = load_pair(row + 2 * j);
      }
#endif
    }
#pragma unroll
    for (int i = 0; i < kPairsPerPiece; ++i) window[p * kPairsPerPiece + i] = piece.pair[i];
  }
  // window[lead + j] is pair j: shift the window down by lead, one bit of it at a time.
#pragma unroll
  for (int shift = 1; shift < kPairsPerPiece; shift *= 2) {
    const bool by_shift = (lead & shift) != 0;
#pragma unroll
    for (int i = 0; i + shift < kWindowPairs; ++i) window[i] = by_shift ? window[i + shift] : window[i];
  }
#pragma unroll
  for (int j = 0; j < N; ++j) pairs[j] = window[j];
}

// A row's first N pairs into registers, as load_pair loads each, in the widest loads its place allows: the 16-byte
// pieces where the row starts on 16 bytes and fills them; the 8-byte pieces of 16-bit pairs where it starts on 8 and
// fills them; else, with kWindow, the 16-byte pieces that hold it (load_row_from_pieces_holding_it), without, a pair
// at a time. The row starts on a pair (the row kernel over pairs at even K; the runtime checks the pointer and ld).
template <bool kWindow, typename T, int N>
__device__ __forceinline__ void load_row_pairs(WeightPair<T> (&pairs)[N], const T* row) {
  constexpr int kPairBytes = static_cast<int>(sizeof(WeightPair<T>));
  const unsigned long long address = reinterpret_cast<unsigned long long>(row);
  if constexpr (N * kPairBytes % 16 == 0)
    if (address % 16 == 0) return load_row_pieces<16>(pairs, row);
  if constexpr (kPairBytes < 8 && N * kPairBytes % 8 == 0)
    if (address % 8 == 0) return load_row_pieces<8>(pairs, row);
  if constexpr (kWindow && kPairBytes < 16) {
    load_row_from_pieces_holding_it(pairs, row);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) pairs[j] = load_pair(row + 2 * j);
  }
}

// Rows of odd K over pairs (sample_pairs, sample_split_pairs) pair up from the even address at or before their start:
// the row's phase is 1 when that is the weight before it, else 0.
template <typename T>
__device__ __forceinline__ int pair_phase(const T* row) {
  return static_cast<int>(reinterpret_cast<unsigned long long>(row) / sizeof(T) & 1u);
}

// A pair with its first or its second weight made zero (as its bits): the weight outside a row of odd K in the
// row's first or last column, kept in registers (load_row_pairs_by_phase).
template <typename T>
__device__ __forceinline__ WeightPair<T> without_first(WeightPair<T> pair) {
  if constexpr (sizeof(T) == 2) return WeightPair<T>{pair.bits & 0xffff0000u};
  else return WeightPair<T>{T(0), pair.second};
}
template <typename T>
__device__ __forceinline__ WeightPair<T> without_second(WeightPair<T> pair) {
  if constexpr (sizeof(T) == 2) return WeightPair<T>{pair.bits & 0xffffu};
  else return WeightPair<T>{pair.first, T(0)};
}

// -1 as a weight: what the CPU execution puts where the device reads a weight outside the row, so that a pair not
// cleared of it fails pass 1's screen (and a test that compares draws) rather than passing unseen.
template <typename T>
__device__ __forceinline__ T outside_weight() { return T(-1); }
template <>
__device__ __forceinline__ bf16_bits outside_weight<bf16_bits>() { return bf16_bits{0xbf80u}; }
template <>
__device__ __forceinline__ half_bits outside_weight<half_bits>() { return half_bits{0xbc00u}; }

// A row of odd K's N = (K + 1) / 2 columns paired by its phase (pair_phase), kept in registers: on the device the
// 16-byte pieces that hold it, from the even address at or before its start (load_row_from_pieces_holding_it; f64
// pairs a pair at a time). Every piece holds a weight of the row, since a pair never straddles a piece. The weight
// outside the row (weight -1 in column 0 at phase 1, weight K in column N - 1 at phase 0) is then cleared, so that
// the columns sum, screen and search as the row's own weights.
template <typename T, int N>
__device__ __forceinline__ void load_row_pairs_by_phase(WeightPair<T> (&pairs)[N], const T* row, int phase) {
  const T* const first_pair = row - phase;
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(WeightPair<T>) < 16) {
    load_row_from_pieces_holding_it(pairs, first_pair);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) pairs[j] = load_pair(first_pair + 2 * j);
  }
#else
  // The CPU execution reads only the row's weights and puts outside_weight() where the device reads one outside it.
  for (int j = 0; j < N; ++j) {
    T weights[2];
    for (int i = 0; i < 2; ++i) {
      const int k = 2 * j + i - phase;  // the row's weight k, 0 <= k < K = 2N - 1
      weights[i] = k >= 0 && k < 2 * N - 1 ? row[k] : outside_weight<T>();
    }
    pairs[j] = load_pair(weights);
  }
#endif
  pairs[0] = phase != 0 ? without_first(pairs[0]) : pairs[0];
  pairs[N - 1] = phase == 0 ? without_second(pairs[N - 1]) : pairs[N - 1];
}

// A pair of one weight and a zero: sample_split_pairs' column that holds a weight of a row of odd K and one outside
// it loads the row's weight alone (its sum and its screen are then that weight's).
template <typename T>
__device__ __forceinline__ WeightPair<T> lone_pair(const T* p) {
  if constexpr (sizeof(T) == 2) return WeightPair<T>{static_cast<unsigned int>(p[0].bits)};
  else return WeightPair<T>{p[0], T(0)};
}

// A pair loaded whatever `use` says and kept only where it does: the warp's copy loads read every place they form
// (inside the copy, even for padding or a row past the last), so their guard is a select rather than a branch around
// the load (docs/DESIGN.md section 14).
template <typename T>
__device__ __forceinline__ WeightPair<T> kept_pair(bool use, WeightPair<T> x) {
  return use ? x : WeightPair<T>{};
}

// Rows of odd K paired by their phase (bit s of `phases`: slot s's row): bit s of the result is set when column
// `column` of slot s's row holds a weight outside the row beside one in it, column 0 of a row of phase 1 (weights -1
// and 0) or column `columns` - 1 of a row of phase 0 (weights K - 1 and K).
__device__ __forceinline__ unsigned int lone_columns(int column, int columns, unsigned int phases) {
  return (column == 0 ? phases : 0u) | (column == columns - 1 ? ~phases : 0u);
}
// The slots whose pair at `column` lies wholly in their row: not padding left of column 0 (column < 0), not a column
// that lone_columns names. The row kernel's tiles load only these; a row's own lane sums the weight a lone column
// holds of it (its first or its last) by itself.
__device__ __forceinline__ unsigned int whole_columns(int column, int columns, unsigned int phases) {
  return column < 0 ? 0u : ~lone_columns(column, columns, phases);
}
// Column j of a row's own pairs (`pairs`: the even address at or before the row's start, `phase` the row's phase), as
// far as it lies in the row, the row's weight alone where the column holds one outside it: the remnant of a row of odd
// K, searched linearly by its own lane, j known when compiling.
template <typename T>
__device__ __forceinline__ WeightPair<T> own_pair(const T* pairs, int j, int columns, int phase) {
  const bool lone = (j == 0 && phase != 0) || (j == columns - 1 && phase == 0);
  return lone ? lone_pair(pairs + 2 * j + phase) : load_pair(pairs + 2 * j);
}

// Column j of a row of odd K (`row` its first weight, `phase` its phase) as its place holds it: weights 2j - phase and
// 2j + 1 - phase, a weight outside the row as zero in its own half. Reads the row's weights only: the drawn column of
// a kernel that keeps its chosen tile (the pick and the drawn weight's check read it as they read the tile's).
template <typename T>
__device__ __forceinline__ WeightPair<T> column_pair(const T* row, int j, int columns, int phase) {
  const int first = 2 * j - phase;
  if (first < 0) {  // column 0 of a row of phase 1: weight 0 second
    if constexpr (sizeof(T) == 2) return WeightPair<T>{static_cast<unsigned int>(row[0].bits) << 16};
    else return WeightPair<T>{T(0), row[0]};
  }
  if (first + 1 >= 2 * columns - 1) return lone_pair(row + first);  // the last column of a row of phase 0
  return load_pair(row + first);
}

template <typename T> struct Limits;
template <> struct Limits<float> { static __device__ __forceinline__ float max() { return 3.402823466e+38f; } };
template <> struct Limits<double> {
  static __device__ __forceinline__ double max() { return 1.7976931348623157e+308; }
};

// A weight is usable when it is a finite number >= 0 (-0.0 counts as zero; NaN, infinities and negatives do not).
template <typename T>
__device__ __forceinline__ bool valid_weight(T x) { return x >= T(0) && x <= Limits<T>::max(); }

// The two weights of a pair, each in the accumulator: the first picks within a drawn pair, and the drawn one is
// checked for zero.
template <typename T>
__device__ __forceinline__ auto pair_first(WeightPair<T> pair) { return widen(pair.first); }
template <typename T>
__device__ __forceinline__ auto pair_second(WeightPair<T> pair) { return widen(pair.second); }
__device__ __forceinline__ float pair_first(WeightPair<bf16_bits> pair) { return __uint_as_float(pair.bits << 16); }
__device__ __forceinline__ float pair_second(WeightPair<bf16_bits> pair) {
  return __uint_as_float(pair.bits & 0xffff0000u);
}
__device__ __forceinline__ float pair_first(WeightPair<half_bits> pair) {
  return widen(half_bits{static_cast<unsigned short>(pair.bits & 0xffffu)});
}
__device__ __forceinline__ float pair_second(WeightPair<half_bits> pair) {
  return widen(half_bits{static_cast<unsigned short>(pair.bits >> 16)});
}

// A pair's table entry: the sum of its two weights in the accumulator. Whether they are usable is pass 1's screen's
// question (screen_pair), not this sum's.
template <typename T>
__device__ __forceinline__ auto pair_sum(WeightPair<T> pair) {
  return pair_first(pair) + pair_second(pair);
}

// Pass 1's screen of the weights (docs/DESIGN.md section 6). Rather than test every weight it loads, a lane keeps
// the largest bit pattern among them, read as an unsigned integer (a float's bits, the high word of a double): one
// integer max per weight. Every usable weight (finite, >= 0) has a pattern within the limit of screen_passed; every
// unusable one (negative, NaN, infinite) lies above it, and so does -0.0, which is usable. A group of lanes whose
// screens all stayed within the limit holds only usable weights; in any other group each lane tests its own row
// weight by weight (row_has_unusable_weight), so the verdict is always the per-weight test's.
__device__ __forceinline__ unsigned int screen_weight(unsigned int screen, float x) {
  const unsigned int bits = __float_as_uint(x);
  return bits > screen ? bits : screen;
}
__device__ __forceinline__ unsigned int screen_weight(unsigned int screen, double x) {
  const auto high = static_cast<unsigned int>(static_cast<unsigned long long>(__double_as_longlong(x)) >> 32);
  return high > screen ? high : screen;
}
__device__ __forceinline__ bool screen_passed(unsigned int screen, float) { return screen <= 0x7f7fffffu; }
__device__ __forceinline__ bool screen_passed(unsigned int screen, double) { return screen <= 0x7fefffffu; }

// The screen of a pair of weights (sample_pairs) as loaded. For f32 and f64 the two weights' patterns; for f16 and
// bf16 the two 16-bit halves' maxima kept apart on the pair's bits (one __vmaxu2; ptxas folds two into one 3-input
// max). A usable bf16 is at most 0x7f7f, a usable f16 at most 0x7bff.
template <typename T>
__device__ __forceinline__ unsigned int screen_pair(unsigned int screen, WeightPair<T> pair) {
  return screen_weight(screen_weight(screen, widen(pair.first)), widen(pair.second));
}
__device__ __forceinline__ unsigned int max_of_halves(unsigned int screen, unsigned int bits) {
#ifdef __CUDA_ARCH__
  return __vmaxu2(screen, bits);
#else
  const unsigned int low = (bits & 0xffffu) > (screen & 0xffffu) ? bits & 0xffffu : screen & 0xffffu;
  const unsigned int high = (bits >> 16) > (screen >> 16) ? bits >> 16 : screen >> 16;
  return low | high << 16;
#endif
}
__device__ __forceinline__ unsigned int screen_pair(unsigned int screen, WeightPair<bf16_bits> pair) {
  return max_of_halves(screen, pair.bits);
}
__device__ __forceinline__ unsigned int screen_pair(unsigned int screen, WeightPair<half_bits> pair) {
  return max_of_halves(screen, pair.bits);
}
__device__ __forceinline__ bool pair_screen_passed(unsigned int screen, float) { return screen_passed(screen, 0.0f); }
__device__ __forceinline__ bool pair_screen_passed(unsigned int screen, double) { return screen_passed(screen, 0.0); }
__device__ __forceinline__ bool pair_screen_passed(unsigned int screen, bf16_bits) {
  return (screen & 0xffffu) <= 0x7f7fu && (screen >> 16) <= 0x7f7fu;
}
__device__ __forceinline__ bool pair_screen_passed(unsigned int screen, half_bits) {
  return (screen & 0xffffu) <= 0x7bffu && (screen >> 16) <= 0x7bffu;
}

// Whether `predicate` holds on some lane of this lane's group: `width` lanes of the warp, starting at a multiple of
// `width`. Every lane of the warp must call it (one __ballot_sync).
__device__ __forceinline__ bool group_any(bool predicate, int width) {
  const unsigned int lanes = __ballot_sync(0xffffffffu, predicate);
  if (width == 32) return lanes != 0u;
  const unsigned int first_lane = threadIdx.x & 31u & ~static_cast<unsigned int>(width - 1);
  return ((lanes >> first_lane) & ((1u << width) - 1u)) != 0u;
}

// The per-weight test of one row, for the groups whose screen did not pass: whether any of its K weights is
// unusable. Lanes run it alone (no shuffles inside).
template <typename T>
__device__ __forceinline__ bool row_has_unusable_weight(const T* row, int K) {
  bool unusable = false;
#pragma unroll 1
  for (int k = 0; k < K; ++k) unusable |= !valid_weight(widen(row[k]));
  return unusable;
}

// A row can be sampled when its total is positive and finite.
template <typename T>
__device__ __forceinline__ bool valid_total(T total) { return total > T(0) && total <= Limits<T>::max(); }

// The largest value below a positive finite `total`.
__device__ __forceinline__ float value_below(float total) {
  return __uint_as_float(__float_as_uint(total) - 1u);
}
__device__ __forceinline__ double value_below(double total) {
  return __longlong_as_double(__double_as_longlong(total) - 1ll);
}

// u * total, guarded so that it stays below total whatever the rounding (docs/DESIGN.md section 5).
template <typename T>
__device__ __forceinline__ T scaled_uniform(T u, T total) {
  const T scaled = u * total;
  return scaled < total ? scaled : value_below(total);
}

// A rounded product that is never fused into a following add (the generated kernels form every LDA weight
// this way, so that their two passes and the fallback see identical weights).
__device__ __forceinline__ float product(float x, float y) { return __fmul_rn(x, y); }
__device__ __forceinline__ double product(double x, double y) { return __dmul_rn(x, y); }

// The launch contract of a generated kernel (docs/DESIGN.md section 9): blockDim = (threads, 1, 1) and a 1-D grid
// of at least ceil(items / items_per_cta) CTAs. Any other launch would leave items unwritten (or write them twice
// and count their invalid rows twice), so it traps: the launch fails loudly instead.
__device__ __forceinline__ void require_launch(int threads, int items_per_cta, long long items) {
  if (blockDim.x != static_cast<unsigned int>(threads) || blockDim.y != 1u || blockDim.z != 1u || gridDim.y != 1u ||
      gridDim.z != 1u || static_cast<long long>(gridDim.x) * items_per_cta < items)
    __trap();
}

// Adds one invalid row to the caller's {count, first row} counters, when it asked for them.
__device__ __forceinline__ void report_invalid_row(unsigned long long* invalid_rows, long long row) {
  if (invalid_rows != nullptr) {
    atomicAdd(&invalid_rows[0], 1ull);
    atomicMin(&invalid_rows[1], static_cast<unsigned long long>(row));
  }
}

// Two launches that overlap (docs/DESIGN.md section 16): the row kernel over a batch's first rows, and sample_split
// over its last rows launched to overlap it (programmatic dependent launch, sm_90 on). The row kernel's CTAs let the
// next launch start as soon as they have all started, so that sample_split's short CTAs take the SMs that the row
// kernel's last CTAs leave one by one; one CTA of sample_split waits for the whole row kernel, so that it ends after
// the row kernel and what follows on the stream finds both done. Both are no-ops before sm_90, on the CPU, and where
// no launch overlaps.
__device__ __forceinline__ void let_next_launch_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_previous_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Pass 1's staged loads (docs/DESIGN.md section 14). They run only on rows that start on 16 bytes:
template <typename T>
__device__ __forceinline__ bool rows_on_16_bytes(const T* weights, long long ld) {
  return reinterpret_cast<unsigned long long>(weights) % 16 == 0 && (ld * static_cast<long long>(sizeof(T))) % 16 == 0;
}

// Where a copy lands in shared memory: from sm_80 on the 32-bit shared-window address, worked out from a pointer
// (shared_address; every copy and mbarrier below takes its address from it). The staged loads of rows that start
// anywhere work it out once for their ring, so that each copy adds its offset in 32 bits instead of forming a 64-bit
// generic address and converting it. Elsewhere (older GPUs, the CPU execution) the pointer itself.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
typedef unsigned int SharedAddress;
__device__ __forceinline__ SharedAddress shared_address(void* pointer) {
  unsigned int address;
  asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(address) : "l"(pointer));
  return address;
}
#else
typedef unsigned char* SharedAddress;
__device__ __forceinline__ SharedAddress shared_address(void* pointer) { return static_cast<unsigned char*>(pointer); }
#endif

// Copies 16 bytes from global to shared memory, or writes 16 zero bytes when !in_row. From sm_80 on the copy is
// asynchronous (cp.async, through L2 only): it holds no register, and is complete for this thread only after
// commit_copies and wait_copies; other lanes see it after a __syncwarp that follows. Elsewhere it copies at once.
__device__ __forceinline__ void copy_16_bytes(void* shared_destination, const void* source, bool in_row) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned int destination = shared_address(shared_destination);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(destination), "l"(source), "r"(in_row ? 16 : 0)
               : "memory");
#elif defined(__CUDA_ARCH__)
  struct alignas(16) Piece {
    unsigned int word[4];
  };
  *static_cast<Piece*>(shared_destination) = in_row ? *static_cast<const Piece*>(source) : Piece{{0u, 0u, 0u, 0u}};
#else
  // The CPU execution (bfly/lockstep.hpp): a plain copy, done when the call returns.
  if (in_row) __builtin_memcpy(shared_destination, source, 16);
  else __builtin_memset(shared_destination, 0, 16);
#endif
}

// The same for the first `bytes` (0 to 16) of the 16 at `source`, the rest of the destination zero: the pieces of the
// staged loads of rows that start anywhere, which are memory's own 16 bytes and stop at the array's end.
__device__ __forceinline__ void copy_up_to_16_bytes(SharedAddress destination, const void* source, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(destination), "l"(source), "r"(bytes) : "memory");
#else
  // Older GPUs and the CPU execution: a plain copy, done when the call returns.
  const unsigned char* const from = static_cast<const unsigned char*>(source);
  for (int i = 0; i < 16; ++i) destination[i] = i < bytes ? from[i] : 0;
#endif
}

// `left` held to 0..16: the bytes a copy of up to 16 takes when `left` bytes remain before the array's end. On the
// GPU as a max and a min (two VIMNMX in SASS), where the conditional form took a compare, a minimum and a select.
__device__ __forceinline__ int bytes_up_to_16(int left) {
#if defined(__CUDA_ARCH__)
  return ::min(::max(left, 0), 16);
#else
  return left < 0 ? 0 : left < 16 ? left : 16;
#endif
}

// `x`, worked out here once: ptxas may not recompute it from its inputs where it is used (in a loop, that costs the
// whole computation every pass when the register was all it needed to keep). The identity on the CPU.
__device__ __forceinline__ unsigned int computed_once(unsigned int x) {
#if defined(__CUDA_ARCH__)
  asm volatile("mov.b32 %0, %0;" : "+r"(x));
#endif
  return x;
}
template <typename T>
__device__ __forceinline__ const T* computed_once(const T* pointer) {
#if defined(__CUDA_ARCH__)
  unsigned long long x = reinterpret_cast<unsigned long long>(pointer);
  asm volatile("mov.b64 %0, %0;" : "+l"(x));
  return reinterpret_cast<const T*>(x);
#else
  return pointer;
#endif
}

// The bits of `low` where `mask` is set and those of `high` elsewhere, in one instruction (LOP3) where ptxas would
// otherwise mask each operand on its own.
template <unsigned int MASK>
__device__ __forceinline__ unsigned int bits_select(unsigned int low, unsigned int high) {
#if defined(__CUDA_ARCH__)
  unsigned int bits;
  asm("lop3.b32 %0, %1, %2, %3, 0xE4;" : "=r"(bits) : "r"(low), "r"(high), "n"(MASK));  // (a & c) | (b & ~c)
  return bits;
#else
  return (low & MASK) | (high & ~MASK);
#endif
}

// Whether `p` lies on 16 bytes.
__device__ __forceinline__ bool on_16_bytes(const void* p) { return reinterpret_cast<unsigned long long>(p) % 16 == 0; }

// Closes this thread's batch of copies issued since the last call (an empty batch counts too).
__device__ __forceinline__ void commit_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until at most `kPending` of this thread's latest batches are still in flight.
template <int kPending>
__device__ __forceinline__ void wait_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
#endif
}

// Pass 1's bulk copy of a warp's rows (docs/DESIGN.md section 14, "Short rows in one copy"). Rows packed tightly
// (ld = K) are one span of memory, weights [first, last) for a warp's 32 rows. The copy holds the 16-byte granules
// that span touches, from the granule of `first` on: weight i of the span is at copy[copy_lead(first) + i]. A granule
// that holds a weight lies within that weight's page, so reading it whole never faults.
template <typename T>
__device__ __forceinline__ int copy_lead(const T* first) {
  return static_cast<int>(reinterpret_cast<unsigned long long>(first) % 16 / sizeof(T));
}

// Starts the copy; every lane of the warp calls it, and then wait_rows_copy. On sm_90 lane 0 issues one bulk copy
// (cp.async.bulk, the TMA) that completes on the mbarrier `done`; on older GPUs the warp copies the granules itself,
// 16 bytes a load; the CPU execution copies the span's weights at once. An empty span (a warp past the last row)
// copies nothing.
template <typename T>
__device__ __forceinline__ void start_rows_copy(T* copy, unsigned long long* done, const T* first, const T* last,
                                                int lane) {
  const unsigned long long from = reinterpret_cast<unsigned long long>(first) & ~15ull;
  const unsigned long long to = (reinterpret_cast<unsigned long long>(last) + 15ull) & ~15ull;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned int copy_address = shared_address(copy), done_address = shared_address(done);
  if (lane == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(done_address) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    if (last > first) {
      const unsigned int bytes = static_cast<unsigned int>(to - from);
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(done_address), "r"(bytes) : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   ::"r"(copy_address), "l"(from), "r"(bytes), "r"(done_address) : "memory");
    }
  }
  __syncwarp();  // the other lanes wait on `done` only once lane 0 has set it up
#elif defined(__CUDA_ARCH__)
  struct alignas(16) Granule {
    unsigned int word[4];
  };
  if (last > first)
    for (unsigned long long g = lane; g < (to - from) / 16; g += 32)
      reinterpret_cast<Granule*>(copy)[g] = reinterpret_cast<const Granule*>(from)[g];
  (void)done;
#else
  if (lane == 0 && last > first) {
    unsigned char* const into =
        reinterpret_cast<unsigned char*>(copy) + reinterpret_cast<unsigned long long>(first) % 16;
    const unsigned char* const span = reinterpret_cast<const unsigned char*>(first);
    const unsigned long long bytes = static_cast<unsigned long long>(last - first) * sizeof(T);
    for (unsigned long long i = 0; i < bytes; ++i) into[i] = span[i];
  }
  (void)done;
  (void)from;
  (void)to;
#endif
}

// Waits until the copy has landed (`any`: the warp copied something), then for the warp's other lanes.
__device__ __forceinline__ void wait_rows_copy(unsigned long long* done, bool any) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned int done_address = shared_address(done);
  if (any) {
    unsigned int landed = 0u;
    while (!landed)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                   : "=r"(landed) : "r"(done_address) : "memory");
  }
#else
  (void)done;
  (void)any;
#endif
  __syncwarp();
}

}  // namespace bfly

namespace bfly {

// Algorithms 1 and 2 on one row in global memory: sequential running sums, linear search. The generated
// kernels fall back to it for a row only when their butterfly search landed on a zero weight through
// rounding, so that a zero-weight category is never drawn. Lanes run it alone (no shuffles inside).
// S is the accumulator: the weights (T) are widened to it, as the kernels' loads do.
template <typename T, typename S>
__device__ __noinline__ int sequential_draw(const T* row, int K, S u) {
  S total = S(0);
  for (int k = 0; k < K; ++k) total += widen(row[k]);
  const S target = scaled_uniform(u, total);
  S running = S(0);
  for (int k = 0; k < K; ++k) {
    running += widen(row[k]);
    if (target < running) return k;
  }
  return K - 1;
}

// sequential_draw for each lane of a warp whose `again` is set, one such row after another, the warp's 32 lanes reading
// the row together (32 weights a load, kRedrawLoads loads in flight a lane) and every lane adding them in column order
// from shuffles: the same sums in the same order as sequential_draw, so the same draw, without one lane walking the
// row alone (a row of 4000 weights kept one lane 180-250 us; docs/DESIGN.md section 6). Every lane of the warp calls
// it; it returns the redrawn category to a lane whose `again` is set and `draw` to the others. The plain sample kernel
// takes it for rows of kWarpRedrawFromK weights or more (gen::redraws_by_warp); shorter rows keep sequential_draw.
template <typename T, typename S>
__device__ __forceinline__ int sequential_draw_by_warp(bool again, const T* row, int K, S u, int draw) {
  constexpr int kRedrawLoads = 8;
  constexpr unsigned int kWarp = 0xffffffffu;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  unsigned int pending = __ballot_sync(kWarp, again);
  while (pending != 0u) {
    const int owner = __popc((pending & (0u - pending)) - 1u);  // the lowest lane still pending
    pending &= pending - 1u;
    const T* const its_row =
        reinterpret_cast<const T*>(__shfl_sync(kWarp, reinterpret_cast<unsigned long long>(row), owner));
    const S its_u = __shfl_sync(kWarp, u, owner);
    // Algorithm 1: the total, weight by weight in column order (zeros past the row add nothing to it).
    S total = S(0);
    for (int c = 0; c < K; c += 32 * kRedrawLoads) {
      S x[kRedrawLoads];
#pragma unroll
      for (int i = 0; i < kRedrawLoads; ++i) x[i] = c + 32 * i + lane < K ? widen(its_row[c + 32 * i + lane]) : S(0);
#pragma unroll
      for (int i = 0; i < kRedrawLoads; ++i)
        for (int j = 0; j < 32; ++j) total += __shfl_sync(kWarp, x[i], j);
    }
    // Algorithm 2: the first column whose running total exceeds u * total (every lane finds the same one).
    const S target = scaled_uniform(its_u, total);
    S running = S(0);
    int found = K - 1;
    bool done = false;
    for (int c = 0; c < K && !done; c += 32 * kRedrawLoads) {
      S x[kRedrawLoads];
#pragma unroll
      for (int i = 0; i < kRedrawLoads; ++i) x[i] = c + 32 * i + lane < K ? widen(its_row[c + 32 * i + lane]) : S(0);
#pragma unroll
      for (int i = 0; i < kRedrawLoads; ++i) {
        for (int j = 0; j < 32; ++j) {
          const S weight = __shfl_sync(kWarp, x[i], j);
          const int k = c + 32 * i + j;
          if (!done && k < K) {
            running += weight;
            if (target < running) {
              found = k;
              done = true;
            }
          }
        }
      }
    }
    if (lane == owner) draw = found;
  }
  return draw;
}

}  // namespace bfly

namespace bfly {

// The collapsed z-step (docs/LDA.md, "The collapsed z-step"): theta and phi are the posterior means of the counts
// of z, theta[m, k] = (n_mk + alpha_k) / (N_m + A) and phi[w, k] = (n_wk + beta) / (n_k + V beta), and each token
// is drawn with itself left out of those counts. That changes only the weight of its own current topic k0, to
//   (theta - 1 / (N_m + A)) * (phi * (n_k0 + V beta) - 1) / (n_k0 + V beta - 1),
// both factors formed in double, kept >= 0 and rounded to T. The excess is how much the weight the passes form,
// product(theta, phi), lies above it: the drawn weights are the passes' with the excess taken off topic k0. (The
// CPU reference, lda/src/reference.cpp, writes the same formula.)
template <typename T>
__device__ __forceinline__ T own_topic_excess(T theta, T phi, long long doc_tokens, double alpha_sum, int topic_count,
                                              double v_beta) {
  const T with_token = product(theta, phi);
  const double theta_without = static_cast<double>(theta) - 1.0 / (static_cast<double>(doc_tokens) + alpha_sum);
  const double denominator = static_cast<double>(topic_count) + v_beta;  // n_k0 + V beta
  const double phi_without = denominator > 1.0
                                 ? (static_cast<double>(phi) * denominator - 1.0) / (denominator - 1.0)
                                 : static_cast<double>(phi);
  const T without = product(static_cast<T>(theta_without > 0.0 ? theta_without : 0.0),
                            static_cast<T>(phi_without > 0.0 ? phi_without : 0.0));
  return with_token > without ? with_token - without : T(0);
}

// sequential_draw for the LDA z-step: the weights are the rounded products theta[k] * phi[k], less `excess` at
// topic `own` for the collapsed z-step (own_topic_excess; own = -1: none).
template <typename T>
__device__ __noinline__ int sequential_draw_products(const T* theta, const T* phi, int K, T u, int own = -1,
                                                     T excess = T(0)) {
  T total = T(0);
  for (int k = 0; k < K; ++k) total += k == own ? product(theta[k], phi[k]) - excess : product(theta[k], phi[k]);
  const T target = scaled_uniform(u, total);
  T running = T(0);
  for (int k = 0; k < K; ++k) {
    running += k == own ? product(theta[k], phi[k]) - excess : product(theta[k], phi[k]);
    if (target < running) return k;
  }
  return K - 1;
}

}  // namespace bfly

#endif  // BFLY_SAMPLE_SUPPORT_CUH
