// The emitters of the sample kernel: constants, table build, loads, searches and the two passes.
#include "emitters.hpp"

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <string>

namespace bfly::gen::emit {
namespace {

// "1, 5, 9, 13": the rows d = (bit - 1) + 2 * bit * i that hold the level's butterflies or tree nodes.
std::string rows_list(int bit, int W) {
  std::string out;
  for (int d = bit - 1; d < W; d += 2 * bit) out += (out.empty() ? "" : ", ") + std::to_string(d);
  return out;
}

}  // namespace

// Algorithms 9 and 10 over several blocks: the chunk search, the block within the chunk, the reloaded tile.
void pass2_blocks(const LaunchGeometry& geometry, const OperationText& op, std::string_view S, CodeWriter& w);

std::string_view sum_type(const KernelSpec& spec) { return is_narrow(spec.type) ? "S" : "T"; }

std::string widened(const KernelSpec& spec, std::string_view element) {
  return is_narrow(spec.type) ? fmt::format("bfly::widen({})", element) : std::string(element);
}

void constants(const KernelSpec& spec, const LaunchGeometry& geometry, CodeWriter& w) {
  if (is_narrow(spec.type)) {
    w.line("typedef {} T;  // element type of the weights: storage only, each load widens it to S", cuda_type(spec.type));
    w.line("typedef {} S;  // accumulator: the running sums, the tables, the target and the uniform",
           cuda_type(accumulator_of(spec.type)));
  } else {
    w.line("typedef {} T;  // element type of the weights and of the running sums", cuda_type(spec.type));
    w.line("typedef T S;  // accumulator: the element type itself");
  }
  const bool per_group = item_per_group(spec.operation);
  const std::string_view item = family_of(spec.operation).item;
  w.line("constexpr int W = {};  // lanes per group; a group draws for W {}", spec.W,
         per_group ? fmt::format("tokens of its {} at a time", item) : std::string("consecutive rows"));
  w.line("constexpr int LOG2_W = {};  // levels of the butterfly build and of the in-block search", spec.log2_w());
  w.line("constexpr int K = {};  // categories per row", spec.K);
  if (spec.linear_remnant())
    w.line("constexpr int REMNANT = {};  // K mod W leading columns, searched linearly (REMNANT <= R = {})",
           spec.remnant(), spec.R);
  else if (spec.padded())
    w.line("constexpr int REMNANT = 0;  // the K mod W = {} leading columns are padded to block 0 (> R = {})",
           spec.remnant(), spec.R);
  else
    w.line("constexpr int REMNANT = 0;  // K is a multiple of W");
  w.line("constexpr int BLOCKS = {};  // W x W blocks per row", spec.blocks());
  w.line("constexpr int FIRST_BLOCK_COLUMN = {};  // column of block 0{}", spec.first_block_column(),
         spec.padded() ? " (negative: leading zero weights pad the remnant)" : "");
  if (spec.blocks() > 1)
    w.line("constexpr int BLOCKS_IN_FLIGHT = {};  // blocks whose loads pass 1 issues before building the first",
           geometry.blocks_in_flight);
  w.line("constexpr int CHUNK_BLOCKS = {};  // blocks per running total kept in shared memory",
         geometry.chunk_blocks);
  w.line("constexpr int CHUNKS = {};  // running totals per row in shared memory (Algorithm 9 searches them)",
         geometry.chunks);
  w.line("constexpr int THREADS = {};  // threads per CTA, one per {}", geometry.threads_per_cta,
         per_group ? fmt::format("token of the group's {} in flight", item) : std::string(item));
  if (per_group) w.line("constexpr int GROUPS = {};  // groups ({}s in flight) per CTA", geometry.rows_per_cta, item);
  if (const auto more = operation_emitters(spec.operation).constants) more(spec, geometry, w);
  w.line("constexpr unsigned int FULL = 0xffffffffu;  // every lane of the warp takes part in every shuffle");
}

void build_table(int W, Variant variant, CodeWriter& w) {
  if (variant == Variant::addsub)
    w.line("// Algorithm 8 lines 18-30 (addsub, Figure 8): each butterfly turns [a b; c d] into [a d; a+b c+d].");
  else
    w.line("// Section 3 (swap, Figure 4): each butterfly turns [a b; c d] into [a c; a+b c+d].");
  w.line("// On entry a[k] of lane r is weight r of lane k's block; on exit row i of the table is a[i]:");
  w.line("// lane j holds the sum of lane L's weights y..y+k (docs/DESIGN.md section 4). W - 1 shuffles in all.");
  w.line("template <typename V>");
  auto body = w.scope("__device__ __forceinline__ void build_table(V (&a)[W], int r)");
  for (int b = 0, bit = 1; bit < W; ++b, bit *= 2) {
    w.line("// b = {} (bit = {}): butterflies on the register pairs (d, d + {}), d = {}", b, bit, bit,
           rows_list(bit, W));
    for (int i = 0; i < W / (2 * bit); ++i) {
      const int d = 2 * bit * i + (bit - 1);
      const std::string h = fmt::format("const V h = (r & {0}) ? a[{1}] : a[{2}];", bit, d, d + bit);
      const std::string v = fmt::format("const V v = __shfl_xor_sync(FULL, h, {}, W);", bit);
      if (variant == Variant::addsub)
        w.line("{{ {} {} if (r & {}) a[{}] = a[{}]; a[{}] = a[{}] + v; }}", h, v, bit, d, d + bit, d + bit, d);
      else
        w.line("{{ {} {} if (r & {}) a[{}] = v; else a[{}] = v; a[{}] += a[{}]; }}", h, v, bit, d, d + bit, d + bit,
               d);
    }
  }
}

void load_functions(const KernelSpec& spec, CodeWriter& w) {
  const bool padded = spec.padded();
  const std::string S(sum_type(spec));
  w.line("// Algorithm 5 / Algorithm 8 lines 13-17, transposed access: on step k, lane r loads weight `column`");
  w.line("// of row k, so the W lanes read W consecutive weights of one row. Only loads: nothing here waits for them.");
  {
    auto body = w.scope(
        "__device__ __forceinline__ void load_block(" + S + " (&a)[W], const T* rows, long long ld, int rows_left, "
        "int column)");
    if (padded) w.line("const bool in_row = column >= 0;  // block 0 starts left of column 0: those weights are 0");
    w.line("const T* p = rows + column;");
    for (int k = 0; k < spec.W; ++k) {
      const std::string cond = padded ? fmt::format("{} < rows_left && in_row", k) : fmt::format("{} < rows_left", k);
      w.line("a[{0}] = {1} ? {2} : {3}(0);", k, cond, widened(spec, fmt::format("p[{} * ld]", k)), S);
    }
  }
  w.blank();
  w.line("// Every weight is checked once, when its block is used: bit k of `bad` marks an unusable weight of row k.");
  {
    auto body = w.scope("__device__ __forceinline__ void check_block(const " + S + " (&a)[W], unsigned int& bad)");
    for (int k = 0; k < spec.W; ++k) w.line("if (!bfly::valid_weight(a[{0}])) bad |= 1u << {0};", k);
  }
  w.blank();
  w.line("// The same transposed access for the blocks the lanes chose: row k's block comes from lane k.");
  w.line("// Blocks past the last (a chunk that ends early) read as zeros.");
  {
    auto body = w.scope(
        "__device__ __forceinline__ void load_chosen_blocks(" + S + " (&a)[W], const T* rows, long long ld, "
        "int rows_left, int block, int r)");
    for (int k = 0; k < spec.W; ++k) {
      w.line("{{ const int b = __shfl_sync(FULL, block, {0}, W); const int c = FIRST_BLOCK_COLUMN + b * W + r;", k);
      w.line("  a[{0}] = {0} < rows_left && b < BLOCKS{1} ? {2} : {3}(0); }}", k, padded ? " && c >= 0" : "",
             widened(spec, fmt::format("rows[{} * ld + c]", k)), S);
    }
  }
}

void search_block(int W, Variant variant, CodeWriter& w, std::string_view S) {
  if (variant == Variant::addsub) {
    w.line("// Algorithm 10: binary search of lane r's own block in the addsub table. The range lo .. lo+2*bit-1");
    w.line("// is halved at each level; low and high are the running totals just before and at its end. The");
    w.line("// tree node a lane needs sits in row d of lane (lo | (r & (2*bit-1))) and sums the half selected by");
    w.line("// bit `bit` of r: the left half is added to low, the right half subtracted from high.");
  } else {
    w.line("// Add-only binary search of lane r's own block in the swap table (Figure 4). The range lo .. lo+2*bit-1");
    w.line("// is halved at each level; low is the running total just before it. The tree node a lane needs sits");
    w.line("// in row d of lane (lo | (r & (2*bit-1))) and sums the left half, which is added to low.");
  }
  auto body = w.scope(fmt::format(
      "__device__ __forceinline__ int search_block(const {0} (&a)[W], int r, {0} target, {0} low, {0} high)", S));
  if (variant == Variant::swap) w.line("(void)high;  // the add-only search needs only low");
  w.line("int lo = 0;");
  int level = 1;
  for (int bit = W / 2; bit >= 1; bit /= 2, ++level) {
    const int m = 2 * bit - 1;
    const int mask = (W - 1) & ~m;  // Algorithm 10 line 9
    w.line("// Level {} of {} (bit = {}): tree nodes in rows d = {}; Algorithm 10 lines 8-27", level,
           std::countr_zero(unsigned(W)), bit, rows_list(bit, W));
    auto level_scope = w.scope("");
    w.line("const int source = lo | (r & {});  // the column that holds this lane's node", m);
    if (W / (2 * bit) == 1) {
      w.line("const {} y = __shfl_sync(FULL, a[{}], source, W);", S, bit - 1);
    } else {
      w.line("{0} y = {0}(0);  // lines 11-17: every row is shuffled, each lane keeps the one its tree uses", S);
      for (int i = 0; i < W / (2 * bit); ++i) {
        const int d = (bit - 1) + 2 * bit * i;
        w.line("{{ const {2} t = __shfl_sync(FULL, a[{0}], source, W); if (((r ^ {0}) & {1}) == 0) y = t; }}", d, mask,
               S);
      }
    }
    if (variant == Variant::addsub) {
      w.line("const {} compare = (r & {}) ? high - y : low + y;  // lines 18-20", S, bit);
      w.line("if (target < compare) high = compare; else {{ low = compare; lo += {}; }}  // lines 21-27", bit);
    } else {
      w.line("const {} compare = low + y;", S);
      w.line("if (!(target < compare)) {{ low = compare; lo += {}; }}", bit);
    }
  }
  w.line("return lo;  // Algorithm 10 line 29: the index within the block");
}

namespace {

OperationText sample_text(const KernelSpec&) {
  OperationText t;
  t.remnant_element = "my_row[j]";
  t.load_block = "load_block({a}, rows, ld, rows_left, FIRST_BLOCK_COLUMN + ({b}) * W + r)";
  t.prepare_block = "check_block({a}, bad)";
  t.load_chosen = "load_chosen_blocks(a, rows, ld, rows_left, {}, r)";
  t.remnant_guard = "m < M";
  t.check_weights = true;
  return t;
}

OperationText lda_z_doc_text(const KernelSpec&) {
  OperationText t;
  t.remnant_element = "bfly::product(theta_row[j], my_phi[j])";
  t.load_block = "load_phi({a}, phi, ld_phi, c_warp, {b}, r)";
  t.prepare_block = "multiply_theta_row({a}, theta_row, {b}, r)";
  t.load_chosen = "load_chosen_products_row(a, theta_row, phi, ld_phi, c_warp, {}, r)";
  t.remnant_guard = "c >= 0";
  return t;
}

OperationText lda_z_text(const KernelSpec&) {
  OperationText t;
  t.remnant_element = "bfly::product(theta_local[j], my_phi[j])";
  t.load_block = "load_phi({a}, phi, ld_phi, c_warp, {b}, r)";
  t.prepare_block = "multiply_theta({a}, theta_local, {b})";
  t.load_chosen = "load_chosen_products(a, theta_local, phi, ld_phi, c_warp, {}, r)";
  t.remnant_guard = "c >= 0";
  return t;
}

void lda_z_constants(const KernelSpec& spec, const LaunchGeometry&, CodeWriter& w) {
  w.line("constexpr int THETA_LOCAL = {};  // theta values cached per lane (Algorithm 5)",
         std::max(1, (spec.linear_remnant() ? spec.remnant() : 0) + spec.blocks() * spec.W));
}

void lda_z_doc_constants(const KernelSpec&, const LaunchGeometry& geometry, CodeWriter& w) {
  w.line("constexpr bool THETA_IN_SHARED = {};  // {}", geometry.theta_in_shared ? "true" : "false",
         geometry.theta_in_shared ? "each group stages its document's theta row in shared memory"
                                  : "theta rows are read from global memory (L1): K * GROUPS does not fit");
}

const OperationEmitters kOperationEmitters[] = {
    {Operation::sample, "Algorithms 7-10", nullptr, load_functions, "combine_bad",
     [](const KernelSpec& spec, const LaunchGeometry&, CodeWriter& w) { combine_bad(spec.W, w); }, sample_text},
    {Operation::lda_z, "Algorithms 7-10", lda_z_constants, lda_functions, "cache_theta",
     [](const KernelSpec& spec, const LaunchGeometry&, CodeWriter& w) { cache_theta(spec, w); }, lda_z_text},
    {Operation::lda_z_doc, "Algorithms 8-10 with one document per group of W lanes", lda_z_doc_constants,
     lda_doc_functions, "stage_theta", stage_theta_row, lda_z_doc_text},
};

}  // namespace

const OperationEmitters& operation_emitters(Operation operation) {
  for (const OperationEmitters& entry : kOperationEmitters)
    if (entry.operation == operation) return entry;
  throw Error(fmt::format("no emitters for operation {}", name_of(operation)));
}

void interface_values(const KernelFamily& family, ElementType type, std::string_view kernel_name,
                      std::string_view items_per_cta, std::map<std::string, std::string>& values) {
  const std::string_view items = family.arg(ArgRole::items).name;
  // The signature, wrapped at 120 columns with continuation lines indented by 4, opening the kernel's body.
  constexpr std::size_t kWidth = 120;
  std::string signature = std::string(kernel_name) + "(";
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < family.args.size(); ++i) {
    const KernelArg& arg = family.args[i];
    std::string parameter = c_type(arg.type, type) + (is_pointer(arg.type) ? " __restrict__ " : " ") +
                            std::string(arg.name) + (i + 1 < family.args.size() ? "," : ") {");
    if (i > 0) {
      if (signature.size() - line_start + 1 + parameter.size() > kWidth) {
        signature += "\n    ";
        line_start = signature.size() - 4;
      } else {
        signature += " ";
      }
    }
    signature += parameter;
  }
  values["kernel_signature"] = signature;
  // A family whose grid is not ceil(items / items_per_cta) CTAs (sample_split) gives its own contract and check.
  values.try_emplace("launch_contract", fmt::format(
      "// Launch contract (docs/DESIGN.md section 9): blockDim = (THREADS, 1, 1), a 1-D grid of at least\n"
      "// ceil({0} / {1}) CTAs, no dynamic shared memory. Any other launch traps (__trap) rather than leave {2}s\n"
      "// unwritten.",
      items, items_per_cta, family.item));
  values.try_emplace("launch_check", fmt::format("bfly::require_launch(THREADS, {}, {});  // the launch contract above",
                                                 items_per_cta, items));
}

void pass1(const KernelSpec& spec, const LaunchGeometry& geometry, CodeWriter& w) {
  const OperationText op = operation_emitters(spec.operation).text(spec);
  const std::string_view S = sum_type(spec);
  if (spec.linear_remnant()) {
    w.line("// Algorithm 8 lines 8-12: the remnant (columns 0 .. REMNANT-1), summed by each lane over its own row.");
    w.line("{0} remnant_total = {0}(0);", S);
    auto guard = w.scope(fmt::format("if ({})", op.remnant_guard));
    w.line("#pragma unroll");
    auto loop = w.scope("for (int j = 0; j < REMNANT; ++j)");
    w.line("const {} x = {};", S, widened(spec, op.remnant_element));
    if (op.check_weights) w.line("if (!bfly::valid_weight(x)) bad |= 1u << r;");
    w.line("remnant_total += x;");
  } else {
    w.line("const {0} remnant_total = {0}(0);  // no linearly searched remnant", S);
  }
  if (spec.linear_remnant()) w.line("running = remnant_total;");
  if (spec.blocks() == 0) return;
  const auto load = [&](const char* a, const char* b) {
    w.line("{};", fmt::format(fmt::runtime(op.load_block), fmt::arg("a", a), fmt::arg("b", b)));
  };
  const auto use = [&](const char* a, const char* b) {
    w.line("{};", fmt::format(fmt::runtime(op.prepare_block), fmt::arg("a", a), fmt::arg("b", b)));
    w.line("build_table({}, r);", a);
    w.line("running += {}[W - 1];  // Algorithm 8 line 31: row W-1 is this lane's block total", a);
  };
  if (spec.blocks() == 1) {
    w.line("// Algorithm 8 lines 13-34 for the one block; pass 2 searches this table as it is.");
    w.line("{} table[W];", S);
    load("table", "0");
    use("table", "0");
    return;
  }
  const auto store = [&](const std::string& b) {
    if (geometry.chunk_blocks == 1)
      w.line("running_total[{}][threadIdx.x] = running;  // line 32", b);
    else
      w.line("if (({0} + 1) % CHUNK_BLOCKS == 0 || {0} == BLOCKS - 1) "
             "running_total[({0}) / CHUNK_BLOCKS][threadIdx.x] = running;", b);
  };
  w.line("// Algorithm 8 lines 13-34 for each block: transposed load, butterfly build, running total of row W-1.");
  block_loop(
      spec.blocks(), geometry.blocks_in_flight, S,
      [&](const std::string& a, const std::string& b) { load(a.c_str(), b.c_str()); },
      [&](const std::string& a, const std::string& b) {
        use(a.c_str(), b.c_str());
        store(b);
      },
      w);
}

void block_loop(int blocks, int in_flight, std::string_view tile_type, const BlockStep& load, const BlockStep& use,
                CodeWriter& w) {
  const auto tile = [](int u) { return fmt::format("a{}", u); };
  const auto block = [](std::string_view first, int u) {
    return u == 0 ? std::string(first) : fmt::format("{} + {}", first, u);
  };
  // Loads of `count` blocks first, then their builds: count * W weights per lane are in flight together.
  const auto group = [&](int count, const std::string& first) {
    std::string tiles;
    for (int u = 0; u < count; ++u) tiles += fmt::format("{}{}[W]", u ? ", " : "", tile(u));
    w.line("{} {};", tile_type, tiles);
    for (int u = 0; u < count; ++u) load(tile(u), block(first, u));
    for (int u = 0; u < count; ++u) use(tile(u), block(first, u));
  };
  const int full = blocks - blocks % in_flight;
  w.line("// BLOCKS_IN_FLIGHT blocks are loaded before the first of them is built, so their loads overlap.");
  if (full > 0) {
    auto loop = w.scope(fmt::format("for (int b = 0; b < {}; b += BLOCKS_IN_FLIGHT)", full), "for each group of blocks");
    group(in_flight, "b");
  }
  if (full < blocks) {
    auto tail = w.scope("", "the last blocks");
    group(blocks - full, std::to_string(full));
  }
}

void shared_memory(const KernelSpec& spec, CodeWriter& w) {
  if (spec.blocks() <= 1) return;  // at most one block: no running totals to keep
  w.line("__shared__ {} running_total[CHUNKS][THREADS];  // Algorithm 9's last rows: one column per thread",
         sum_type(spec));
}

namespace {

// Algorithm 8 lines 13-17, the gather: lane r loads column (block start + r) of lane k's phi row, for every k.
void load_phi_function(const KernelSpec& spec, CodeWriter& w) {
  auto body = w.scope(
      "__device__ __forceinline__ void load_phi(T (&a)[W], const T* phi, long long ld_phi, const int (&c_warp)[W], "
      "int b, int r)");
  w.line("const int col = FIRST_BLOCK_COLUMN + b * W + r;");
  for (int k = 0; k < spec.W; ++k)
    w.line("a[{0}] = c_warp[{0}] >= 0{1} ? phi[c_warp[{0}] * ld_phi + col] : T(0);", k,
           spec.padded() ? " && col >= 0" : "");
}

// Pass 2's products for the blocks the lanes chose: row k's block comes from lane k (zeros past BLOCKS). `theta`
// names the function's theta parameter, `theta_element` the value of row k, column col ({0} is k).
void load_chosen_products_function(const KernelSpec& spec, const char* name, const char* theta,
                                   const char* theta_element, CodeWriter& w) {
  w.line("// The same products for the blocks the lanes chose: row k's block comes from lane k (zeros past BLOCKS).");
  auto body = w.scope(fmt::format("__device__ __forceinline__ void {}(T (&a)[W], const T* {}, const T* phi, "
                                  "long long ld_phi, const int (&c_warp)[W], int block, int r)",
                                  name, theta));
  for (int k = 0; k < spec.W; ++k) {
    w.line("{{ const int b = __shfl_sync(FULL, block, {0}, W); const int col = FIRST_BLOCK_COLUMN + b * W + r;", k);
    w.line("  a[{0}] = c_warp[{0}] >= 0 && b < BLOCKS{1} ? bfly::product({2}, phi[c_warp[{0}] * ld_phi + col]) : "
           "T(0); }}",
           k, spec.padded() ? " && col >= 0" : "", fmt::format(fmt::runtime(theta_element), k));
  }
}

}  // namespace

void lda_doc_functions(const KernelSpec& spec, CodeWriter& w) {
  const bool padded = spec.padded();
  w.line("// Algorithm 8 lines 13-17 with one document per group: row k of block b holds the products");
  w.line("// theta[doc][col] * phi[word of token k][col], col = block start + r. Every row shares the document, so");
  w.line("// lane r needs one theta value per block, theta_row[col]; phi rows are gathered with transposed access.");
  w.line("// load_phi only loads; multiply_theta_row forms the products when the block is used. bfly::product keeps");
  w.line("// every product rounded, never fused into a later add, so both passes and the fallback see identical");
  w.line("// weights. Lanes without a token (c < 0) give zeros.");
  load_phi_function(spec, w);
  w.blank();
  {
    auto body = w.scope(
        "__device__ __forceinline__ void multiply_theta_row(T (&a)[W], const T* theta_row, int b, int r)");
    w.line("const int col = FIRST_BLOCK_COLUMN + b * W + r;");
    w.line("const T t = {}theta_row[col]{};", padded ? "col >= 0 ? " : "", padded ? " : T(0)" : "");
    for (int k = 0; k < spec.W; ++k) w.line("a[{0}] = bfly::product(t, a[{0}]);", k);
  }
  w.blank();
  load_chosen_products_function(spec, "load_chosen_products_row", "theta_row", "theta_row[col]", w);
}

void stage_theta_row(const KernelSpec& spec, const LaunchGeometry& geometry, CodeWriter& w) {
  (void)spec;
  if (geometry.theta_in_shared) {
    w.line("// The group's document row of theta, staged once in shared memory: every token of the document reads it.");
    w.line("__shared__ T theta_rows[GROUPS][K];");
    w.line("T* const theta_row = theta_rows[threadIdx.x / W];");
    w.line("for (int j = r; j < K; j += W) theta_row[j] = m < D ? theta[m * ld_theta + j] : T(0);");
    w.line("__syncwarp();  // the row is complete before any lane of the group reads it");
  } else {
    w.line("// The group's document row of theta, read where it lies (K * GROUPS values do not fit in shared memory);");
    w.line("// every token of the document reads it again, from L1. Groups past the last document read row 0.");
    w.line("const T* const theta_row = theta + (m < D ? m : 0) * ld_theta;");
  }
}

void lda_functions(const KernelSpec& spec, CodeWriter& w) {
  w.line("// Algorithm 8 lines 13-17: the products theta[doc k][col] * phi[word k][col] of block b, where lane r");
  w.line("// takes col = block start + r (transposed access to phi) and theta_local holds theta transposed");
  w.line("// (Algorithm 5). load_phi only loads; multiply_theta forms the products when the block is used.");
  w.line("// bfly::product keeps every product a rounded product, never fused into a later add, so both passes");
  w.line("// and the fallback compute identical weights. Lanes without a token (c < 0) give zeros.");
  load_phi_function(spec, w);
  w.blank();
  {
    auto body = w.scope(
        "__device__ __forceinline__ void multiply_theta(T (&a)[W], const T* theta_local, int b)");
    w.line("const T* t = theta_local + REMNANT + b * W;");
    for (int k = 0; k < spec.W; ++k) w.line("a[{0}] = bfly::product(t[{0}], a[{0}]);", k);
  }
  w.blank();
  load_chosen_products_function(spec, "load_chosen_products", "theta_local", "theta_local[REMNANT + b * W + {0}]", w);
}

void cache_theta(const KernelSpec& spec, CodeWriter& w) {
  w.line("// Algorithm 5: cache theta. The remnant is this lane's own (lines 3-6); block b holds, at b * W + k, the");
  w.line("// weight (block start + r) of document k of the group: transposed access, W consecutive weights a row.");
  w.line("T theta_local[THETA_LOCAL];");
  if (spec.linear_remnant()) {
    w.line("#pragma unroll");
    w.line("for (int j = 0; j < REMNANT; ++j) theta_local[j] = m < D ? theta[m * ld_theta + j] : T(0);");
  }
  if (spec.blocks() == 0) return;
  auto loop = w.scope("for (int b = 0; b < BLOCKS; ++b)", "lines 7-13");
  w.line("const int col = FIRST_BLOCK_COLUMN + b * W + r;");
  w.line("#pragma unroll");
  w.line("for (int k = 0; k < W; ++k)");
  w.line("  theta_local[REMNANT + b * W + k] = k < docs_left{} ? thetas[k * ld_theta + col] : T(0);",
         spec.padded() ? " && col >= 0" : "");
}

void combine_bad(int W, CodeWriter& w) {
  w.line("// Lane j set bit k for an unusable weight of row k: combine the group's bits (log2 W shuffles).");
  for (int s = 1; s < W; s *= 2) w.line("bad |= __shfl_xor_sync(FULL, bad, {}, W);", s);
}

void pass2(const KernelSpec& spec, const LaunchGeometry& geometry, CodeWriter& w) {
  const OperationText op = operation_emitters(spec.operation).text(spec);
  const std::string_view S = sum_type(spec);
  if (spec.blocks() == 0) {
    w.line("// K <= R: the whole row is a remnant, searched linearly (Algorithm 9 lines 17-25).");
    auto guard = w.scope("if (valid)");
    w.line("{0} s = {0}(0);", S);
    w.line("draw = REMNANT - 1;");
    auto loop = w.scope("for (int j = 0; j < REMNANT; ++j)");
    w.line("s += {};", widened(spec, op.remnant_element));
    w.line("if (target < s) { draw = j; break; }");
    return;
  }
  if (spec.blocks() == 1) {
    w.line("// One block: Algorithm 10 searches pass 1's table between the remnant's total and the row's.");
    w.line("draw = FIRST_BLOCK_COLUMN + search_block(table, r, target, remnant_total, total);");
  } else {
    pass2_blocks(geometry, op, S, w);
  }
  if (spec.linear_remnant()) {
    w.line("// Algorithm 9 lines 17-25: u' below the remnant's total: search the remnant linearly.");
    auto guard = w.scope("if (valid && target < remnant_total)");
    w.line("{0} s = {0}(0);", S);
    w.line("draw = REMNANT - 1;");
    auto loop = w.scope("for (int j = 0; j < REMNANT; ++j)");
    w.line("s += {};", widened(spec, op.remnant_element));
    w.line("if (target < s) { draw = j; break; }");
  }
}

void pass2_blocks(const LaunchGeometry& geometry, const OperationText& op, std::string_view S, CodeWriter& w) {
  w.line("// Algorithm 9 lines 7-12: binary search over the running totals at the ends of the chunks.");
  w.line("int chunk = 0;");
  {
    auto search = w.scope("");
    w.line("int hi = CHUNKS - 1;");
    auto loop = w.scope("while (chunk < hi)");
    w.line("const int mid = (chunk + hi) >> 1;");
    w.line("if (target < running_total[mid][threadIdx.x]) hi = mid; else chunk = mid + 1;");
  }
  w.line("{} low = chunk > 0 ? running_total[chunk - 1][threadIdx.x] : remnant_total;  // total before the block", S);
  if (geometry.chunk_blocks == 1) {
    w.line("{} high = running_total[chunk][threadIdx.x];  // total at the end of the block", S);
    w.line("const int block = chunk;");
  } else {
    w.line("// A chunk holds CHUNK_BLOCKS blocks: rebuild their totals (each lane its own chunk) and find the block");
    w.line("// whose running total first exceeds u'. The sums repeat pass 1's exactly, so one is always found.");
    w.line("{} high = low;", S);
    w.line("int block = chunk * CHUNK_BLOCKS;");
    w.line("bool found = false;");
    w.line("{} run = low;", S);
    auto loop = w.scope("for (int t = 0; t < CHUNK_BLOCKS; ++t)", "for each block of the chunk");
    w.line("{} a[W];", S);
    w.line("{};", fmt::format(fmt::runtime(op.load_chosen), "chunk * CHUNK_BLOCKS + t"));
    w.line("build_table(a, r);");
    w.line("const {} next = run + a[W - 1];", S);
    w.line("if (!found && target < next) { found = true; block = chunk * CHUNK_BLOCKS + t; low = run; high = next; }");
    w.line("run = next;");
  }
  w.line("// Algorithm 10 searches the chosen block's table; every lane chose its own block, so the group loads");
  w.line("// a tile whose row k is lane k's block (W weights per row) and builds its table (Algorithm 8 again).");
  {
    auto tile = w.scope("");
    w.line("{} a[W];", S);
    w.line("{};", fmt::format(fmt::runtime(op.load_chosen), "block"));
    w.line("build_table(a, r);");
    w.line("draw = FIRST_BLOCK_COLUMN + block * W + search_block(a, r, target, low, high);");
  }
}

}  // namespace bfly::gen::emit
