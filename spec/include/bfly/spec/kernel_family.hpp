// Kernel families as data: for each kind of kernel bfly generates, its typed argument list (name, C type, role),
// what one unit of its grid covers, and its skeleton. The kernel signature, the ahead-of-time launch function and
// its comment, the CPU launchers, the build-time emitters and the runtime's argument packing are all derived from
// this one description (docs/DESIGN.md section 9); nothing else spells an argument list out.
//
// Adding an operation: docs/EXTENDING.md.
#pragma once

#include "bfly/spec/element_type.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bfly::gen {

// The C type of a kernel parameter; `T` stands for the kernel's element type.
enum class ArgType {
  const_elements,  // const T*
  elements,        // T*
  const_i64s,      // const long long*
  const_i32s,      // const int*
  i32s,            // int*
  u64s,            // unsigned long long*
  const_f64s,      // const double*
  f64s,            // double*
  sums,            // S*: arrays of the element type's accumulator (float for f32, f16, bf16; double for f64)
  i64,             // long long
  i32,             // int
  u32,             // unsigned int
  u64,             // unsigned long long
  f64,             // double
};

// What a parameter means to its caller; the checks of the launch function and of the runtime's packing follow it.
enum class ArgRole {
  input,       // device array the kernel reads; not null when there is work
  optional_input,  // device array the kernel reads when it is not null; null turns off what it serves
  output,      // device array the kernel writes; not null when there is work
  scratch,     // device array the kernel uses as workspace; not null when there is work
  counters,    // null, or two device counters preset to {0, ~0ull}: count and first of the invalid items
  items,       // how many rows or documents the grid covers; >= 0, and 0 means no launch
  row_stride,  // elements between consecutive rows of a K-wide array; >= K
  seed,        // the Philox key
  iteration,   // the Philox counter's last word
  value,       // any other scalar
};

struct KernelArg {
  std::string_view name;
  ArgType type;
  ArgRole role;
  std::string_view doc;  // one line for the ahead-of-time header's comment
};

// "const float*" for ArgType::const_elements and f32; scalars as themselves ("long long").
std::string c_type(ArgType type, ElementType element);
bool is_pointer(ArgType type);

// What one kind of kernel takes and how its grid is laid out.
struct KernelFamily {
  std::string_view name;      // as in kernel names and --operation: "sample", "lda_z", ...
  std::string_view summary;   // one line: what one launch computes
  std::string_view item;      // what one unit of the grid covers: "row" or "document"
  std::string_view skeleton;  // the template fragment the generator fills ("bfly/sample_kernel.skeleton.cuh")
  std::span<const KernelArg> args;
  // The kernel loads two adjacent elements of a row at once (sample_pairs, sample_split_pairs): for K even the input
  // array must be aligned to two elements and the row stride even (rows_on_pairs_required). The runtime's packing
  // and the ahead-of-time launch function refuse others.
  bool rows_in_pairs = false;

  // The argument whose role is `role` (the first, for roles several arguments share); throws when there is none.
  const KernelArg& arg(ArgRole role) const;
  // Index of the argument named `name`; throws when there is none.
  std::size_t index_of(std::string_view name) const;
};

// Whether an array of `element`s at `elements` starts on a pair of them (its address a multiple of two elements), as
// the input of a rows_in_pairs family must; with an even row stride, every row then starts on a pair too.
bool starts_on_pair(const void* elements, ElementType element);

// Whether a kernel of `family` for rows of K elements needs every row to start on a pair: a rows_in_pairs family at
// K even. At K odd (sample_pairs, sample_split_pairs) a row pairs up from the even address at or before its start,
// whatever it is.
inline bool rows_on_pairs_required(const KernelFamily& family, long long K) {
  return family.rows_in_pairs && K % 2 == 0;
}

// The kernel signature's parameter list: "const float* __restrict__ weights, long long M, ...", pointers restrict.
std::string parameter_list(const KernelFamily& family, ElementType element, bool restrict_pointers);

// The families bfly generates, in a fixed order; family("sample") finds one by name (throws listing the names).
std::span<const KernelFamily* const> kernel_families();
const KernelFamily& family(std::string_view name);

// One entry point of the LDA iteration module (templates/bfly/lda_iteration.cuh): its family (name and arguments)
// and the device function its body calls. `typed` entry points exist once per element type, named
// "<family name>_<tag>"; in `call`, {T} stands for the element type's CUDA type.
struct IterationKernel {
  KernelFamily family;
  std::string_view call;
  bool typed = false;
  std::string name(ElementType element) const;  // "bfly_lda_theta_f32", "bfly_lda_zero"
};
std::span<const IterationKernel> lda_iteration_kernels();
const IterationKernel& lda_iteration_kernel(std::string_view family_name);

// Launch geometry: how a generated kernel is launched. The kernel embeds the same numbers and traps when launched
// otherwise; the runtime, the ahead-of-time header and the CPU execution all take their grids from here.
struct LaunchGeometry {
  int threads_per_cta = 0;   // blockDim.x; blockDim.y = blockDim.z = 1
  int rows_per_cta = 0;      // items (rows or documents) one CTA covers
  int chunk_blocks = 0;      // blocks whose running total is stored as one shared-memory entry (0: <= 1 block)
  int chunks = 0;            // shared-memory running totals per thread (0 for rows of at most one block)
  bool theta_in_shared = false;  // lda_z_doc: each group's theta row is staged in shared memory (else read from L1)
  int static_shared_bytes = 0;
  int blocks_in_flight = 1;  // blocks whose loads pass 1 issues before building the first of them
  // sample_split only (0 elsewhere): the CTAs that share one row, and the parts (per-lane totals) of a row, which
  // is also the row's share of the part_totals scratch array.
  int ctas_per_row = 0;
  int parts_per_row = 0;
  // The CTAs that cover `items` items: gridDim.x; a launch needs at least this many, in a 1-D grid.
  long long grid_for_rows(long long items) const {
    return ctas_per_row > 0 ? items * ctas_per_row : (items + rows_per_cta - 1) / rows_per_cta;
  }
  friend bool operator==(const LaunchGeometry&, const LaunchGeometry&) = default;
};

}  // namespace bfly::gen
