// write_if_different: see write_file.hpp.
#include "bfly/emit/write_file.hpp"

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>

namespace bfly::gen {

bool write_if_different(const std::string& path, const std::string& content) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream old;
      old << in.rdbuf();
      if (old.str() == content) return false;
    }
  }
  const std::filesystem::path target(path);
  const std::filesystem::path directory = target.has_parent_path() ? target.parent_path() : ".";
  std::random_device random;
  const std::filesystem::path temporary =
      directory / fmt::format(".{}.{:08x}.tmp", target.filename().string(), random());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << content;
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw Error(fmt::format("cannot write {} (is the directory {} there and writable?)", path, directory.string()));
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw Error(fmt::format("cannot replace {}: {}", path, error.message()));
  }
  return true;
}

}  // namespace bfly::gen
