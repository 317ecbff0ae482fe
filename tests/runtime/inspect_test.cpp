// inspect(), list_cache() and clear_cache() against the test's own cache directory (see test_main.cpp).
#include "bfly/jit/inspect.hpp"

#include "bfly/jit/driver.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>

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

  // A damaged file shows as invalid in the listing, and so does a good entry stored under another spec's name
  // (the runtime looks that spec's kernel up there and would reject this one).
  const std::filesystem::path directory = cache_directory().value();
  std::ofstream(directory / "aaa_damaged.bfly") << "junk";
  const std::string good_name = std::filesystem::path(first.cache_entry).filename().string();
  const std::string good_kernel = "bfly_sample_f32_w32_k1024";
  const std::string misnamed = "bfly_sample_f32_w32_k2048" + good_name.substr(good_kernel.size());
  std::filesystem::copy_file(first.cache_entry, directory / misnamed);
  std::ofstream(directory / "notes.txt") << "not the cache's";
  const std::vector<CacheEntryInfo> entries = list_cache();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].name, "aaa_damaged.bfly");
  EXPECT_FALSE(entries[0].valid);
  EXPECT_FALSE(entries[0].problem.empty());
  EXPECT_EQ(entries[1].name, good_name);
  EXPECT_EQ(entries[1].path, std::filesystem::path(first.cache_entry));
  EXPECT_TRUE(entries[1].valid) << entries[1].problem;
  EXPECT_EQ(entries[1].kernel_name, first.kernel_name);
  EXPECT_EQ(entries[1].resources, first.resources);
  EXPECT_EQ(entries[1].bytes, std::filesystem::file_size(first.cache_entry));
  EXPECT_EQ(entries[2].name, misnamed);
  EXPECT_FALSE(entries[2].valid);
  EXPECT_NE(entries[2].problem.find("bfly_sample_f32_w32_k1024_r8_addsub"), std::string::npos) << entries[2].problem;
  const std::string listing = format_cache_list(entries);
  EXPECT_NE(listing.find(directory.string() + ": 3 entries"), std::string::npos) << listing;
  EXPECT_NE(listing.find("aaa_damaged.bfly  4 bytes  INVALID: "), std::string::npos) << listing;
  EXPECT_NE(listing.find(misnamed + "  " + std::to_string(entries[2].bytes) + " bytes  INVALID: holds "
                         "bfly_sample_f32_w32_k1024_r8_addsub"),
            std::string::npos)
      << listing;

  EXPECT_EQ(clear_cache(), 3u);
  EXPECT_TRUE(list_cache().empty());
  EXPECT_TRUE(std::filesystem::exists(directory / "notes.txt")) << "clear removes the cache's files only";
}

// list_cache and clear_cache take any CacheStorage: here one in memory, filled by a KernelCache.
TEST(CacheList, ListsAndClearsASubstitutedStorage) {
  test::MemoryStorage storage;
  const CompileOptions sm90{Arch{90, true}, false};
  const gen::Source source = test::tiny_source(test::spec_for(1024));
  {
    auto filled = std::make_unique<test::MemoryStorage>();
    test::MemoryStorage& disk = *filled;
    KernelCache cache(std::move(filled), /*save_source=*/true);
    cache.get(source, sm90);
    storage.files = disk.files;
  }
  const std::string name = cache_key(source, sm90).file_name;
  ASSERT_EQ(storage.files.size(), 2u) << "entry and its source";
  storage.files["zzz_damaged.bfly"] = "junk";
  const std::string other_name = cache_key(test::tiny_source(test::spec_for(2048)), sm90).file_name;
  storage.files[other_name] = storage.files.at(name);

  const std::vector<CacheEntryInfo> entries = list_cache(storage);
  ASSERT_EQ(entries.size(), 3u) << "the saved source is no entry";
  const auto find = [&](const std::string& wanted) {
    return *std::find_if(entries.begin(), entries.end(), [&](const CacheEntryInfo& e) { return e.name == wanted; });
  };
  EXPECT_TRUE(find(name).valid) << find(name).problem;
  EXPECT_EQ(find(name).path, std::filesystem::path("memory:" + name));
  EXPECT_EQ(find(name).kernel_name, source.kernel_name);
  EXPECT_EQ(find(name).arch, sm90.arch);
  EXPECT_EQ(find(name).bytes, storage.files.at(name).size());
  EXPECT_FALSE(find(other_name).valid) << "another spec's entry under this name";
  EXPECT_NE(find(other_name).problem.find("not the entry this name stands for"), std::string::npos);
  EXPECT_FALSE(find("zzz_damaged.bfly").valid);
  const std::string listing = format_cache_list(entries, "memory");
  EXPECT_NE(listing.find("memory: 3 entries"), std::string::npos) << listing;
  EXPECT_NE(listing.find("  " + name + "  "), std::string::npos) << listing;

  EXPECT_EQ(clear_cache(storage), 3u);
  EXPECT_TRUE(storage.files.empty()) << "entries and the saved source removed";
  EXPECT_TRUE(list_cache(storage).empty());
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
