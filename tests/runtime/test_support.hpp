// Shared pieces of the runtime tests: temporary directories, an in-memory CacheStorage, small sources.
#pragma once

#include "bfly/emit/generate.hpp"
#include "bfly/spec/kernel_spec.hpp"
#include "bfly/jit/cache.hpp"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace bfly::test {

// A fresh directory under the system temp dir, removed with its content by the destructor.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "bfly-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Entries kept in a map, so tests can read and damage them directly.
class MemoryStorage final : public rt::CacheStorage {
 public:
  std::optional<std::string> load(const std::string& name) noexcept override {
    const auto found = files.find(name);
    if (found == files.end()) return std::nullopt;
    return found->second;
  }
  void save(const std::string& name, std::string_view bytes) override { files[name] = std::string(bytes); }
  std::string locate(const std::string& name) const override { return "memory:" + name; }
  std::vector<std::string> list() const override {
    std::vector<std::string> names;
    for (const auto& [name, bytes] : files) names.push_back(name);
    return names;
  }
  void remove(const std::string& name) override { files.erase(name); }

  std::map<std::string, std::string> files;
};

// A Source for `spec` whose text is a one-line kernel: compiles in tens of milliseconds. It carries the family
// and geometry of the spec's generated kernel.
inline gen::Source tiny_source(const gen::KernelSpec& spec, int value = 1) {
  gen::Source source;
  source.spec = spec;
  source.family = std::string(gen::family_of(spec).name);
  source.geometry = gen::launch_geometry(spec);
  source.kernel_name = gen::kernel_name(spec);
  source.text = "extern \"C\" __global__ void " + source.kernel_name + "(int* out) { out[threadIdx.x] = " +
                std::to_string(value) + "; }\n";
  return source;
}

inline gen::KernelSpec spec_for(int K, int W = 32, gen::ElementType type = gen::ElementType::f32,
                                gen::Variant variant = gen::Variant::addsub) {
  gen::KernelSpec spec;
  spec.K = K;
  spec.W = W;
  spec.R = std::min(8, W - 1);
  spec.type = type;
  spec.variant = variant;
  return spec;
}

}  // namespace bfly::test
