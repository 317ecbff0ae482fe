// docs/EXTENDING.md's "adding an operation", followed for a test-only family (row_argmax.hpp): its family row,
// skeleton and emitter are all it defines; the CPU execution, the argument checks, the launch contract, the NVRTC
// compile and the ahead-of-time header with its nvcc build come from bfly's shared machinery.
#include "row_argmax.hpp"

#include "bfly/cpu/cpu_kernel.hpp"
#include "bfly/emit/aot_header.hpp"
#include "bfly/error.hpp"
#include "bfly/jit/compile.hpp"
#include "bfly/spec/kernel_args.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

namespace bfly::test::extending {
std::vector<bfly::cpu::CpuKernel> row_argmax_cpu_kernels();  // written at build time by emit_row_argmax.cpp
}

namespace {

using namespace bfly;
using test::extending::kK;
using test::extending::kRowArgmax;

template <typename T>
void check_cpu_kernel(const cpu::CpuKernel& kernel) {
  const long long M = 300, ld = kK + 3;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> value(0.0, 1.0);
  std::vector<T> weights(static_cast<std::size_t>(M * ld), T(-1));  // the padding is never the largest
  for (long long m = 0; m < M; ++m)
    for (int j = 0; j < kK; ++j) weights[m * ld + j] = static_cast<T>(value(rng));
  std::vector<int> out(static_cast<std::size_t>(M), -7);  // poison
  gen::PackedArgs args(kRowArgmax, gen::element_type_of<T>, "row_argmax", {weights.data(), M, ld, out.data()}, kK);
  cpu::run(kernel, args, 2);
  for (long long m = 0; m < M; ++m) {
    int best = 0;
    for (int j = 1; j < kK; ++j)
      if (weights[m * ld + j] > weights[m * ld + best]) best = j;
    ASSERT_EQ(out[m], best) << kernel.name << " row " << m;
  }
}

TEST(Extending, ATestOnlyFamilyRunsOnTheCpuWithThePackedArguments) {
  const std::vector<cpu::CpuKernel> kernels = test::extending::row_argmax_cpu_kernels();
  const auto wide = std::count_if(std::begin(gen::kElementTypes), std::end(gen::kElementTypes),
                                  [](const gen::ElementTypeInfo& element) { return !element.narrow(); });
  ASSERT_EQ(static_cast<long>(kernels.size()), static_cast<long>(wide));  // f32 and f64
  check_cpu_kernel<float>(kernels[0]);
  check_cpu_kernel<double>(kernels[1]);
  EXPECT_EQ(kernels[0].family, "row_argmax");
}

TEST(Extending, TheNewFamilysRolesGiveItsArgumentChecks) {
  float w[4] = {};
  int o[1] = {};
  const auto pack = [&](std::initializer_list<gen::ArgValue> values) -> std::string {
    try {
      gen::PackedArgs(kRowArgmax, gen::ElementType::f32, "row_argmax", values, kK);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(pack({w, 1, kK, o}), "");
  EXPECT_EQ(pack({w, 1, 3, o}), "row_argmax: ld = 3 is less than K = 37");
  EXPECT_EQ(pack({w, 1, kK, nullptr}), "row_argmax: out is null (M = 1)");
  EXPECT_EQ(pack({w, -2, kK, o}), "row_argmax: M = -2 is negative; M is the number of rows");
}

TEST(ExtendingDeathTest, TheNewFamilysKernelKeepsTheLaunchContract) {
  const cpu::CpuKernel kernel = test::extending::row_argmax_cpu_kernels()[0];
  EXPECT_DEATH(
      {
        std::vector<float> weights(256 * kK, 1.0f);
        std::vector<int> out(256);
        gen::PackedArgs args(kRowArgmax, gen::ElementType::f32, "t", {weights.data(), 256, kK, out.data()}, kK);
        kernel.launch(1, 4, 64, args.data());  // 64 threads per CTA instead of 128
      },
      "__trap\\(\\)");
}

TEST(Extending, TheNewFamilysKernelCompilesWithNvrtc) {
  const gen::Source source = test::extending::generate_row_argmax(1000, gen::ElementType::f64);
  const rt::CompiledKernel compiled = rt::compile(source, rt::default_compile_options(rt::parse_arch("sm_90")));
  EXPECT_TRUE(compiled.resources.known);
  EXPECT_GT(compiled.resources.registers, 0);
  EXPECT_FALSE(compiled.binary.empty());
}

TEST(Extending, TheNewFamilysAheadOfTimeHeaderBuildsWithNvcc) {
  const gen::Source source = test::extending::generate_row_argmax(kK, gen::ElementType::f32);
  const std::string header = gen::aot_header(source, kRowArgmax, "(the extending test)", kK);
  EXPECT_NE(header.find("inline cudaError_t test_row_argmax_f32_k37_launch(\n    const float* weights, long long M, "
                        "long long ld, int* out,\n    cudaStream_t stream = 0)"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("if (M < 0 || ld < 37) return cudaErrorInvalidValue;"), std::string::npos);
  EXPECT_NE(header.find("if (weights == nullptr || out == nullptr) return cudaErrorInvalidValue;"), std::string::npos);
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "bfly_extending";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "row_argmax.cuh") << header;
  std::ofstream(dir / "main.cu") << "#include \"row_argmax.cuh\"\n"
                                    "int main() { return test_row_argmax_f32_k37_launch(nullptr, 0, 37, nullptr) == "
                                    "cudaSuccess ? 0 : 1; }\n";
  const std::string command = std::string(BFLY_NVCC_PATH) + " -arch=sm_90 -o " + (dir / "program").string() + " " +
                              (dir / "main.cu").string() + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

}  // namespace
