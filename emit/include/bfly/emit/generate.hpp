// generate(): KernelSpec -> Source, the CUDA text of one kernel, plus the launch geometry it was written for.
#pragma once

#include "bfly/spec/kernel_family.hpp"
#include "bfly/spec/kernel_spec.hpp"
#include "bfly/spec/lda_baseline.hpp"

#include <map>
#include <string>
#include <vector>

namespace bfly::gen {


// Generated CUDA source. `text` includes bfly's fragments by name (`#include "bfly/philox.cuh"`);
// `headers` lists those names, whose content embedded_templates() holds.
struct Source {
  KernelSpec spec;           // the spec of generate()'s kernels; left default by other sources (see description)
  std::string kernel_name;   // the extern "C" entry point
  std::string text;
  std::vector<std::string> headers;
  std::string description;   // what the kernel is when `spec` does not say it (an LDA baseline's spec); else empty
  ElementType type = ElementType::f32;  // element type of the kernel's arrays (T in its family's arguments)
  std::string family;        // the kernel family's name (gen::family), empty for other sources (the LDA iteration's)
  LaunchGeometry geometry;   // how the kernel must be launched (a generated kernel traps otherwise)
};

// What a family's skeleton needs besides the values of its own placeholders.
struct FamilyKernel {
  const KernelFamily* family = nullptr;
  ElementType type = ElementType::f32;
  std::string kernel_name;
  LaunchGeometry geometry;
  // The skeleton's constant that counts the items one CTA covers ("THREADS", or "GROUPS" when a group of W
  // threads takes an item); the skeleton defines it and THREADS (threads per CTA).
  std::string items_per_cta = "THREADS";
  std::string_view skeleton_text;  // empty: the embedded fragment family->skeleton
  std::vector<std::string> headers = {"bfly/philox.cuh", "bfly/sample_support.cuh"};
};

// The one way a kernel's source is made from its family: fills the skeleton's {{kernel_signature}} (the name and
// the family's parameter list), {{launch_contract}} (the comment above the kernel), {{launch_check}} (the
// bfly::require_launch trap), {{threads_per_cta}} and {{detail_namespace}} ("<kernel name>_detail") from the family
// and the geometry, and every other placeholder from `values` (fill_template's rules:
// an unknown or unused placeholder is an error). The Source carries the family, type and geometry.
Source fill_family_skeleton(const FamilyKernel& kernel, std::map<std::string, std::string> values);

// For messages: source.description if set, else describe(source.spec).
std::string describe(const Source& source);

// Kernel ABI of operation `sample` (T = float or double):
//   extern "C" __global__ void <kernel_name>(const T* weights, long long M, long long ld, int* out,
//                                             unsigned long long* invalid_rows,
//                                             unsigned long long seed, unsigned int iteration);
// weights: M rows of K weights, row r at weights + r * ld (ld >= K); out[r] receives the drawn
// category, or -1 for a row with a negative, NaN or infinite weight, or a zero or overflowing total.
// invalid_rows: null, or two counters the caller sets to {0, ~0ull}: the kernel adds the number of
// invalid rows to [0] (atomicAdd) and lowers [1] to the first invalid row (atomicMin).
// Grid: launch_geometry(spec).grid_for_rows(M) CTAs of threads_per_cta threads, no dynamic shared memory.
//
// Kernel ABI of operations `lda_z` (one thread per document) and `lda_z_doc` (one group of W threads per
// document); both launch grid_for_rows(D) CTAs of threads_per_cta threads:
//   extern "C" __global__ void <kernel_name>(const T* theta, long long ld_theta, const T* phi, long long ld_phi,
//                                             const long long* doc_offsets, const int* words, int* z, long long D,
//                                             unsigned long long* invalid_tokens,
//                                             unsigned long long seed, unsigned int iteration);
// theta: D x K (row m: document m's topic weights); phi: V x K (row w: word w's weights); document m owns tokens
// doc_offsets[m] .. doc_offsets[m + 1] - 1 with word ids words[t] < V; z[t] receives the topic of token t, or -1
// when all its weights are zero. Uniform for token t: counter (t lo, t hi, 0, iteration).
// Uniform for row r: Philox4x32-10, key (seed lo, seed hi), counter (r lo, r hi, 0, iteration).
Source generate(const KernelSpec& spec);

// The sample forms beyond one draw from weights (KernelSpec::input, KernelSpec::draws; generate() calls it for them):
//   extern "C" __global__ void <kernel_name>(const T* weights, long long M, long long ld, int num_samples, int* out,
//                                             unsigned long long* invalid_rows, unsigned long long seed,
//                                             unsigned int iteration);                      // sample_draws, _distinct
//   extern "C" __global__ void <kernel_name>(const T* logits, long long M, long long ld, double temperature,
//                                             int num_samples, int* out, unsigned long long* invalid_rows,
//                                             unsigned long long seed, unsigned int iteration);  // sample_logits...
// out: M x num_samples, row-major (draw d of row r at out[r * num_samples + d]). Draw d of row r takes the uniform
// of Philox counter (r lo, r hi, d, iteration), so draw 0 is the single-draw kernel's; a redraw without replacement
// (attempt a > 0) takes word d + a * 2^24. Logits draw from softmax(logits / temperature); -inf is never drawn, and a
// row of all -inf or with a NaN or +inf is invalid (all its draws -1). Without replacement, draws past a row's
// positive categories are -1 and the row is counted in invalid_rows. Same grid as generate()'s sample kernels.
Source generate_sample_draws(const KernelSpec& spec);

// Kernel ABI of the LDA baselines (generate_lda_baseline: Algorithm 1 with 3, Algorithm 4 with 6 and 3): the lda_z
// ABI with the paper's table of partial sums p after D:
//   extern "C" __global__ void <kernel_name>(const T* theta, long long ld_theta, const T* phi, long long ld_phi,
//                                             const long long* doc_offsets, const int* words, int* z, long long D,
//                                             T* p, unsigned long long* invalid_tokens,
//                                             unsigned long long seed, unsigned int iteration);
// theta, phi, doc_offsets, words, z, invalid_tokens, seed and iteration as for lda_z: the same uniform per token,
// the topic the smallest k whose running sum of the rounded products theta[m][k] * phi[w][k] exceeds u * total,
// and -1 (reported in invalid_tokens) for a token whose total is zero or not finite. p: D x K elements of scratch,
// the running sum k of document m's current token at p[k * D + m] (a column per document, so that a warp's stores
// are coalesced); on return it holds the running sums of each document's last token (nothing for an empty one).
// Grid: launch_geometry(spec).grid_for_rows(D) CTAs of threads_per_cta (128) threads, one document per thread,
// no dynamic shared memory; D == 0 needs no launch.
Source generate_lda_baseline(const LdaBaselineSpec& spec);

// The LDA iteration module of `type`: templates/bfly/lda_iteration.cuh and one extern "C" entry point per
// gen::lda_iteration_kernels() (the typed ones for `type`), each calling its device function.
Source lda_iteration_source(ElementType type);

// The source with every bfly fragment pasted in place of its #include: one self-contained text
// (used by the ahead-of-time header).
std::string inline_headers(const Source& source);

// A kernel that runs only the table build (Algorithm 8 lines 18-30) of one W x W block on symbolic
// entries and writes the table; executed on the CPU by `bfly-gen table` and the table tests.
// Signature: extern "C" __global__ void <name>(bfly::Sym* table)   // table[i * W + lane]
std::string generate_table_kernel(int W, Variant variant, std::string* kernel_name_out = nullptr);

// bfly's version string, written into every generated header comment.
std::string_view bfly_version();

}  // namespace bfly::gen
