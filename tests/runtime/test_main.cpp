// main() of the runtime tests: points BFLY_CACHE_DIR at a fresh temporary directory before anything reads the
// environment, so no test touches the user's cache.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  std::string pattern = (std::filesystem::temp_directory_path() / "bfly-rt-cache-XXXXXX").string();
  const std::filesystem::path cache = ::mkdtemp(pattern.data());
  ::setenv("BFLY_CACHE_DIR", cache.c_str(), 1);
  ::unsetenv("BFLY_CACHE");
  const int result = RUN_ALL_TESTS();
  std::error_code ignored;
  std::filesystem::remove_all(cache, ignored);
  return result;
}
