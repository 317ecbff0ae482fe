// inspect(), list_cache() and clear_cache() against the test's own cache directory (see test_main.cpp).
#include "bfly/jit/inspect.hpp"

#include "bfly/jit/driver.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace bfly::rt {
namespace {

TEST(Inspect, CompilesThroughTheCacheAndLists) {
  ASSERT_EQ(clear_cache(), 0u) << "test_main gives every test process an empty cache";
  const gen::KernelSpec spec = test::spec_for(1024);
  const KernelReport first = inspect(spec, std::string("sm_90"));
  EXPECT_EQ(first.kernel_name, "bfly_sample_f32_w32_k1024_r8_addsub");
  EXPECT_EQ(first.level, CacheLevel::built);
  EXPECT_EQ(first.arch, (Arch{90, true}));
  EXPECT_TRUE(first.resources.known);
  EXPECT_GT(first.resources.registers, 0);
  EXPECT_TRUE(std::filesystem::exists(first.cache_entry)) << first.cache_entry;
  EXPECT_EQ(inspect(spec, std::string("sm_90")).level, CacheLevel::memory);

  const std::string text = format_report(first);
  EXPECT_NE(text.find("registers"), std::string::npos) << text;
  EXPECT_NE(text.find(first.cache_entry), std::string::npos) << text;

  // A damaged file shows as invalid in the listing.
  std::ofstream(cache_directory().value() / "aaa_damaged.bfly") << "junk";
  const std::vector<CacheEntryInfo> entries = list_cache();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_FALSE(entries[0].valid);
  EXPECT_FALSE(entries[0].problem.empty());
  EXPECT_TRUE(entries[1].valid);
  EXPECT_EQ(entries[1].kernel_name, first.kernel_name);
  EXPECT_EQ(entries[1].resources, first.resources);
  EXPECT_NE(format_cache_list(entries).find("INVALID"), std::string::npos);

  EXPECT_EQ(clear_cache(), 2u);
  EXPECT_TRUE(list_cache().empty());
}

TEST(Inspect, WithoutArchOrDeviceAsksForArch) {
  if (gpu_available()) GTEST_SKIP() << "this machine has a GPU, whose architecture inspect would use";
  try {
    inspect(test::spec_for(64), std::nullopt);
    FAIL() << "inspect without --arch and without a device succeeded";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("--arch"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace bfly::rt
