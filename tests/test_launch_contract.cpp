// The launch contract of generated kernels: the launch their geometry gives writes every row; a launch with another
// block size, a 2-D block or too small a grid traps (the run stops with a message) instead of leaving rows unwritten.
// Run on the CPU through the example kernel's lockstep launcher, which takes the grid and block as given.
#include "bfly/cpu/cpu_kernel.hpp"
#include "bfly/cpu/table_kernels.hpp"
#include "bfly/spec/kernel_args.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

constexpr int kK = 1024;        // the example spec's K
constexpr long long kRows = 512;

struct Batch {
  std::vector<float> weights = std::vector<float>(kRows * kK, 1.0f);
  std::vector<int> out = std::vector<int>(kRows, -7);  // poison: no draw is -7
  unsigned long long invalid[2] = {0, ~0ull};
  bfly::gen::PackedArgs args() {
    const bfly::cpu::CpuKernel& kernel = bfly::tables::example_kernel();
    return bfly::gen::PackedArgs(bfly::gen::family(kernel.family), bfly::gen::ElementType::f32, "test",
                                 {weights.data(), kRows, kK, out.data(), invalid, 3ull, 0u}, kK);
  }
  long long unwritten() const {
    long long n = 0;
    for (int v : out) n += v == -7;
    return n;
  }
};

TEST(LaunchContract, TheGeometrysLaunchWritesEveryRow) {
  Batch batch;
  bfly::gen::PackedArgs args = batch.args();
  bfly::cpu::run(bfly::tables::example_kernel(), args, 2);
  EXPECT_EQ(batch.unwritten(), 0);
  EXPECT_EQ(batch.invalid[0], 0u);
}

TEST(LaunchContractDeathTest, AnotherBlockSizeTraps) {
  // Before the contract, half the threads per CTA left half of these 512 rows unwritten without a word.
  const bfly::cpu::CpuKernel& kernel = bfly::tables::example_kernel();
  ASSERT_EQ(kernel.geometry.threads_per_cta, 32);  // staged pass 1 in a deep ring (docs/DESIGN.md section 14)
  EXPECT_DEATH(
      {
        Batch batch;
        bfly::gen::PackedArgs args = batch.args();
        kernel.launch(1, static_cast<unsigned>(kRows / 64), 64, args.data());
      },
      "__trap\\(\\).*blockDim \\(64, 1, 1\\)");
}

TEST(LaunchContractDeathTest, TooSmallAGridTraps) {
  const bfly::cpu::CpuKernel& kernel = bfly::tables::example_kernel();
  EXPECT_DEATH(
      {
        Batch batch;
        bfly::gen::PackedArgs args = batch.args();
        kernel.launch(1, static_cast<unsigned>(kernel.geometry.grid_for_rows(kRows) - 1),
                      static_cast<unsigned>(kernel.geometry.threads_per_cta), args.data());
      },
      "__trap\\(\\).*gridDim \\(15, 1, 1\\)");
}

TEST(LaunchContract, ALargerGridIsAllowed) {
  Batch batch;
  bfly::gen::PackedArgs args = batch.args();
  const bfly::cpu::CpuKernel& kernel = bfly::tables::example_kernel();
  kernel.launch(2, static_cast<unsigned>(kernel.geometry.grid_for_rows(kRows) + 3),
                static_cast<unsigned>(kernel.geometry.threads_per_cta), args.data());
  EXPECT_EQ(batch.unwritten(), 0);
}

}  // namespace
