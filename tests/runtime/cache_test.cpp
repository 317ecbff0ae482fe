// Kernel cache: key composition, self-checking entries (with the kernel's family and launch geometry), atomic
// publication by concurrent processes, listing and removal through the storage, BFLY_CACHE=0, and the memory-only
// fallback for an unwritable directory.
#include "bfly/jit/cache.hpp"

#include "bfly/jit/environment.hpp"
#include "test_support.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fstream>
#include <functional>

extern char** environ;

namespace bfly::rt {

// Readable levels in failure messages.
void PrintTo(CacheLevel level, std::ostream* os) { *os << name_of(level); }

namespace {

using test::MemoryStorage;
using test::spec_for;
using test::TempDir;
using test::tiny_source;

const CompileOptions kSm90{Arch{90, true}, false};

std::vector<std::filesystem::path> files_in(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) files.push_back(entry.path());
  return files;
}

TEST(CacheKey, SameInputsSameKeyAndReadableName) {
  const gen::Source source = tiny_source(spec_for(1024));
  const CacheKey a = cache_key(source, kSm90);
  const CacheKey b = cache_key(source, kSm90);
  EXPECT_EQ(a.digest, b.digest);
  EXPECT_EQ(a.digest.size(), 64u);
  const NvrtcVersion& nvrtc = nvrtc_version();
  EXPECT_EQ(a.file_name, fmt::format("bfly_sample_f32_w32_k1024_r8_addsub_sm90_nvrtc{}.{}_{}.bfly", nvrtc.major,
                                     nvrtc.minor, a.digest.substr(0, 16)));
}

TEST(CacheKey, EveryFieldChangesTheKey) {
  const gen::Source source = tiny_source(spec_for(1024));
  const std::string base = cache_key(source, kSm90).digest;

  NvrtcVersion other_build = nvrtc_version();
  other_build.build += "-other";
  EXPECT_NE(cache_key(source, kSm90, other_build).digest, base) << "NVRTC build";
  NvrtcVersion other_minor = nvrtc_version();
  other_minor.minor += 1;
  EXPECT_NE(cache_key(source, kSm90, other_minor).digest, base) << "NVRTC version";

  EXPECT_NE(cache_key(source, CompileOptions{Arch{90, true}, true}).digest, base) << "option -lineinfo";
  EXPECT_NE(cache_key(source, CompileOptions{Arch{80, true}, false}).digest, base) << "arch";
  EXPECT_NE(cache_key(source, CompileOptions{Arch{90, false}, false}).digest, base) << "PTX instead of cubin";
  EXPECT_NE(cache_key(tiny_source(spec_for(1024), 2), kSm90).digest, base) << "source text";
  gen::Source renamed = source;
  renamed.kernel_name = gen::kernel_name(spec_for(1023));
  EXPECT_NE(cache_key(renamed, kSm90).digest, base) << "kernel name";
  gen::Source other_family = source;
  other_family.family = "lda_z";
  EXPECT_NE(cache_key(other_family, kSm90).digest, base) << "family";
  const std::vector<std::pair<const char*, std::function<void(gen::LaunchGeometry&)>>> geometry_changes = {
      {"threads_per_cta", [](gen::LaunchGeometry& g) { g.threads_per_cta += 32; }},
      {"rows_per_cta", [](gen::LaunchGeometry& g) { g.rows_per_cta += 1; }},
      {"chunk_blocks", [](gen::LaunchGeometry& g) { g.chunk_blocks += 1; }},
      {"chunks", [](gen::LaunchGeometry& g) { g.chunks += 1; }},
      {"theta_in_shared", [](gen::LaunchGeometry& g) { g.theta_in_shared = !g.theta_in_shared; }},
      {"static_shared_bytes", [](gen::LaunchGeometry& g) { g.static_shared_bytes += 16; }},
      {"blocks_in_flight", [](gen::LaunchGeometry& g) { g.blocks_in_flight += 1; }},
      {"ctas_per_row", [](gen::LaunchGeometry& g) { g.ctas_per_row += 1; }},
      {"parts_per_row", [](gen::LaunchGeometry& g) { g.parts_per_row += 32; }},
  };
  for (const auto& [field, change] : geometry_changes) {
    gen::Source other_geometry = source;
    change(other_geometry.geometry);
    EXPECT_NE(cache_key(other_geometry, kSm90).digest, base) << "geometry." << field;
  }
}

// A geometry whose every field differs from the default and from the others, so that a field lost, swapped or
// truncated on the way through an entry shows.
gen::LaunchGeometry distinct_geometry() {
  gen::LaunchGeometry g;
  g.threads_per_cta = 384;
  g.rows_per_cta = 12;
  g.chunk_blocks = 5;
  g.chunks = 7;
  g.theta_in_shared = true;
  g.static_shared_bytes = 49152;
  g.blocks_in_flight = 3;
  g.ctas_per_row = 11;
  g.parts_per_row = 8192;
  return g;
}

TEST(CacheEntry, RoundTripsEveryField) {
  gen::Source source = tiny_source(spec_for(1024));
  source.family = "lda_z_doc";
  source.geometry = distinct_geometry();
  const CompiledKernel kernel = compile(source, kSm90);
  EXPECT_EQ(kernel.family, source.family) << "compile() keeps the Source's family";
  EXPECT_EQ(kernel.geometry, source.geometry) << "compile() keeps the Source's geometry";
  const CacheKey key = cache_key(source, kSm90);
  std::string why;
  const std::optional<CompiledKernel> back = decode_entry(encode_entry(key, kernel), &key, &why);
  ASSERT_TRUE(back.has_value()) << why;
  EXPECT_EQ(back->kernel_name, kernel.kernel_name);
  EXPECT_EQ(back->family, "lda_z_doc");
  EXPECT_EQ(back->geometry, distinct_geometry());
  EXPECT_EQ(back->geometry.threads_per_cta, 384);
  EXPECT_EQ(back->geometry.rows_per_cta, 12);
  EXPECT_EQ(back->geometry.chunk_blocks, 5);
  EXPECT_EQ(back->geometry.chunks, 7);
  EXPECT_TRUE(back->geometry.theta_in_shared);
  EXPECT_EQ(back->geometry.static_shared_bytes, 49152);
  EXPECT_EQ(back->geometry.blocks_in_flight, 3);
  EXPECT_EQ(back->geometry.ctas_per_row, 11);
  EXPECT_EQ(back->geometry.parts_per_row, 8192);
  EXPECT_EQ(back->arch, kernel.arch);
  EXPECT_EQ(back->options, kernel.options);
  EXPECT_EQ(back->log, kernel.log);
  EXPECT_EQ(back->binary, kernel.binary);
  EXPECT_EQ(back->resources, kernel.resources);
  EXPECT_TRUE(back->resources.known);
}

// A generated kernel's entry gives back the family and geometry gen::generate put in its Source, which is what
// rt::load launches it with: no recovering them from the kernel name.
TEST(CacheEntry, GeneratedKernelKeepsTheGeometryOfItsSource) {
  const gen::Source source = gen::generate(spec_for(2048, 16));
  ASSERT_FALSE(source.family.empty());
  CompiledKernel kernel;  // encode_entry needs no compiled binary to carry the metadata
  kernel.kernel_name = source.kernel_name;
  kernel.family = source.family;
  kernel.geometry = source.geometry;
  kernel.arch = Arch{90, true};
  kernel.binary = "not a cubin";
  const CacheKey key = cache_key(source, kSm90);
  const std::optional<CompiledKernel> back = decode_entry(encode_entry(key, kernel), &key);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->family, "sample");
  EXPECT_EQ(back->geometry, gen::launch_geometry(spec_for(2048, 16)));
}

// Entries of format 1 (before entries held the family and geometry) are misses: rejected by their version, before
// their layout is read.
TEST(CacheEntry, RejectsOlderFormatEntries) {
  ASSERT_EQ(kCacheFormatVersion, 3);
  const gen::Source source = tiny_source(spec_for(1024));
  const CacheKey key = cache_key(source, kSm90);
  std::string format_two = encode_entry(key, compile(source, kSm90));
  format_two[8] = 2;  // the little-endian u32 after the 8-byte magic
  std::string why;
  EXPECT_FALSE(decode_entry(format_two, &key, &why));
  EXPECT_NE(why.find("format version 2 (this bfly reads 3)"), std::string::npos) << why;
  EXPECT_FALSE(decode_entry(format_two, nullptr, &why)) << "rejected whatever key is asked for";

  // In the cache: a miss, rebuilt, and replaced by a format-3 entry.
  auto storage = std::make_unique<MemoryStorage>();
  storage->files[key.file_name] = format_two;
  MemoryStorage& disk = *storage;
  KernelCache cache(std::move(storage));
  const CacheLookup lookup = cache.get(source, kSm90);
  EXPECT_EQ(lookup.level, CacheLevel::built);
  EXPECT_EQ(cache.stats().disk_rejected, 1u);
  EXPECT_EQ(lookup.kernel->geometry, source.geometry);
  EXPECT_EQ(disk.files.at(key.file_name)[8], 3) << "entry rewritten in the current format";
}

// An entry is valid under its own name only: the runtime looks it up by the name of its key and would reject
// another spec's entry stored there.
TEST(CacheEntry, StoredEntryMustBeTheOneItsNameStandsFor) {
  const gen::Source source = tiny_source(spec_for(1024));
  const CacheKey key = cache_key(source, kSm90);
  const std::string entry = encode_entry(key, compile(source, kSm90));
  std::string why;
  EXPECT_TRUE(decode_stored_entry(entry, key.file_name, &why)) << why;

  const CacheKey other = cache_key(tiny_source(spec_for(2048)), kSm90);
  EXPECT_FALSE(decode_stored_entry(entry, other.file_name, &why)) << "another spec's name";
  EXPECT_NE(why.find("bfly_sample_f32_w32_k1024_r8_addsub"), std::string::npos) << why;
  EXPECT_NE(why.find("not the entry this name stands for"), std::string::npos) << why;

  const CacheKey other_options = cache_key(source, CompileOptions{Arch{90, true}, true});
  ASSERT_NE(other_options.file_name, key.file_name);
  EXPECT_FALSE(decode_stored_entry(entry, other_options.file_name, &why)) << "same kernel, another key";
  EXPECT_FALSE(decode_stored_entry(entry, cache_key(source, CompileOptions{Arch{80, true}, false}).file_name, &why))
      << "another architecture";
  EXPECT_FALSE(decode_stored_entry("junk", key.file_name, &why)) << "damage is still damage";
  EXPECT_NE(why.find("truncated"), std::string::npos) << why;
}

TEST(CacheEntry, RejectsDamageAndForeignKeys) {
  const gen::Source source = tiny_source(spec_for(1024));
  const CacheKey key = cache_key(source, kSm90);
  const std::string entry = encode_entry(key, compile(source, kSm90));
  std::string why;

  EXPECT_FALSE(decode_entry(entry.substr(0, entry.size() - 1), &key, &why)) << "truncated payload";
  EXPECT_NE(why.find("length"), std::string::npos) << why;
  EXPECT_FALSE(decode_entry(entry.substr(0, 20), &key, &why)) << "truncated header";
  EXPECT_FALSE(decode_entry("", &key, &why)) << "empty file";

  for (std::size_t at : {std::size_t(0), std::size_t(9), std::size_t(60), entry.size() / 2, entry.size() - 1}) {
    std::string flipped = entry;
    flipped[at] ^= 0x10;
    EXPECT_FALSE(decode_entry(flipped, &key, &why)) << "flipped byte at " << at;
  }
  std::string other_version = entry;
  other_version[8] = static_cast<char>(kCacheFormatVersion + 1);
  EXPECT_FALSE(decode_entry(other_version, &key, &why));
  EXPECT_NE(why.find("format version"), std::string::npos) << why;

  const CacheKey other = cache_key(source, CompileOptions{Arch{90, true}, true});
  EXPECT_FALSE(decode_entry(entry, &other, &why)) << "entry of another key";
  EXPECT_TRUE(decode_entry(entry, &key, &why)) << why;
}

TEST(KernelCache, LevelsAndCounters) {
  const gen::Source source = tiny_source(spec_for(1024));
  auto first_storage = std::make_unique<MemoryStorage>();
  MemoryStorage& disk = *first_storage;
  KernelCache first(std::move(first_storage));
  EXPECT_EQ(first.get(source, kSm90).level, CacheLevel::built);
  EXPECT_EQ(first.get(source, kSm90).level, CacheLevel::memory);
  const CacheStats stats = first.stats();
  EXPECT_EQ(stats.builds, 1u);
  EXPECT_EQ(stats.memory_hits, 1u);
  EXPECT_EQ(stats.memory_misses, 1u);
  EXPECT_EQ(stats.disk_misses, 1u);
  EXPECT_EQ(stats.disk_writes, 1u);
  EXPECT_EQ(disk.files.size(), 1u);

  // A new process (a new cache object) on a copy of the same storage finds the entry on disk.
  KernelCache second(std::make_unique<MemoryStorage>(disk));
  const CacheLookup lookup = second.get(source, kSm90);
  EXPECT_EQ(lookup.level, CacheLevel::disk);
  EXPECT_EQ(lookup.entry, "memory:" + cache_key(source, kSm90).file_name);
  EXPECT_TRUE(lookup.kernel->resources.known) << "resources survive the disk round trip";
  EXPECT_EQ(lookup.kernel->binary, first.get(source, kSm90).kernel->binary);
  EXPECT_EQ(second.stats().disk_hits, 1u);
  EXPECT_EQ(second.stats().builds, 0u);
}

// A kernel that is not a generated spec (the LDA iteration's, a test's checker) is cached on disk like the rest.
TEST(KernelCache, KernelsWithoutASpecNameRoundTripThroughDisk) {
  gen::Source source;
  source.kernel_name = "bfly_helper_kernels";
  source.text = "extern \"C\" __global__ void helper(int* x) { x[threadIdx.x] = 1; }\n";
  auto storage = std::make_unique<MemoryStorage>();
  MemoryStorage& disk = *storage;
  KernelCache first(std::move(storage));
  EXPECT_EQ(first.get(source, kSm90).level, CacheLevel::built);
  KernelCache second(std::make_unique<MemoryStorage>(disk));
  EXPECT_EQ(second.get(source, kSm90).level, CacheLevel::disk);
  EXPECT_EQ(second.stats().disk_rejected, 0u);
}

// By spec: the first call generates and compiles; later calls find the kernel by the remembered key, and the
// source-keyed entry is the same one.
TEST(KernelCache, GetBySpecRemembersTheKey) {
  KernelCache cache(std::make_unique<MemoryStorage>());
  const gen::KernelSpec spec = spec_for(64);
  const CacheLookup built = cache.get(spec, kSm90);
  EXPECT_EQ(built.level, CacheLevel::built);
  const CacheLookup again = cache.get(spec, kSm90);
  EXPECT_EQ(again.level, CacheLevel::memory);
  EXPECT_EQ(again.kernel, built.kernel);
  EXPECT_EQ(cache.get(gen::generate(spec), kSm90).kernel, built.kernel);
  EXPECT_EQ(cache.stats().builds, 1u);
  EXPECT_EQ(cache.stats().memory_hits, 2u);
  const CompileOptions sm80{Arch{80, true}, false};
  EXPECT_EQ(cache.get(spec, sm80).level, CacheLevel::built) << "other options are another kernel";
}

// A damaged entry is a miss: it is not loaded, the kernel is rebuilt, and the entry replaced by a good one.
TEST(KernelCache, TruncatedOrFlippedEntryIsRebuiltAndReplaced) {
  const gen::Source source = tiny_source(spec_for(1024));
  const CacheKey key = cache_key(source, kSm90);
  const std::vector<std::pair<const char*, std::function<void(std::string&)>>> damages = {
      {"truncated", [](std::string& bytes) { bytes.resize(bytes.size() / 2); }},
      {"flipped byte", [](std::string& bytes) { bytes[bytes.size() - 3] ^= 0x01; }},
      {"other format version", [](std::string& bytes) { bytes[8] = static_cast<char>(kCacheFormatVersion + 7); }},
  };
  for (const auto& [what, damage] : damages) {
    auto storage = std::make_unique<MemoryStorage>();
    MemoryStorage& disk = *storage;
    KernelCache writer(std::move(storage));
    writer.get(source, kSm90);
    const std::string good = disk.files.at(key.file_name);
    std::string bad = good;
    damage(bad);

    auto reader_storage = std::make_unique<MemoryStorage>();
    reader_storage->files[key.file_name] = bad;
    MemoryStorage& reader_disk = *reader_storage;
    KernelCache reader(std::move(reader_storage));
    EXPECT_EQ(reader.try_load(key), nullptr) << what << ": try_load must report a miss";
    EXPECT_EQ(reader.stats().disk_rejected, 1u) << what;
    const CacheLookup lookup = reader.get(source, kSm90);
    EXPECT_EQ(lookup.level, CacheLevel::built) << what << ": rebuilt, not loaded";
    EXPECT_EQ(lookup.kernel->binary, decode_entry(good, &key)->binary) << what;
    EXPECT_TRUE(decode_entry(reader_disk.files.at(key.file_name), &key)) << what << ": entry replaced";
  }
}

TEST(KernelCache, SavesSourceBesideEntryWhenAsked) {
  auto storage = std::make_unique<MemoryStorage>();
  MemoryStorage& disk = *storage;
  const gen::Source source = tiny_source(spec_for(1024));
  KernelCache cache(std::move(storage), /*save_source=*/true);
  cache.get(source, kSm90);
  const std::string name = cache_key(source, kSm90).file_name;
  ASSERT_TRUE(disk.files.count(name + ".cu"));
  EXPECT_EQ(disk.files.at(name + ".cu"), source.text);
}

TEST(KernelCache, UnwritableDirectoryDegradesToMemoryWithOneWarning) {
  TempDir temp;
  // A directory below a regular file cannot be created, whoever runs the test (root ignores permissions).
  std::ofstream(temp.path() / "not-a-directory") << "x";
  const std::filesystem::path directory = temp.path() / "not-a-directory" / "cache";
  KernelCache cache(std::make_unique<DirectoryStorage>(directory));
  testing::internal::CaptureStderr();
  EXPECT_EQ(cache.get(tiny_source(spec_for(1024)), kSm90).level, CacheLevel::built);
  EXPECT_EQ(cache.get(tiny_source(spec_for(2048)), kSm90).level, CacheLevel::built);
  EXPECT_EQ(cache.get(tiny_source(spec_for(1024)), kSm90).level, CacheLevel::memory);
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(cache.disk_enabled());
  EXPECT_NE(warnings.find("memory only"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find(directory.string()), std::string::npos) << warnings;
  EXPECT_EQ(warnings.find("memory only"), warnings.rfind("memory only")) << "one warning, not one per kernel";
}

TEST(DirectoryStorage, ListsAndRemovesTheCachesFilesOnly) {
  TempDir temp;
  DirectoryStorage storage(temp.path() / "not-yet");
  EXPECT_TRUE(storage.list().empty()) << "a directory not yet created holds nothing";
  EXPECT_NO_THROW(storage.remove("missing.bfly"));
  storage.save("b.bfly", "entry b");
  storage.save("a.bfly", "entry a");
  storage.save("a.bfly.cu", "source a");
  std::ofstream(storage.directory() / ".a.bfly.0123456789abcdef.tmp") << "left by an interrupted save";
  std::ofstream(storage.directory() / "notes.txt") << "not the cache's";
  std::filesystem::create_directory(storage.directory() / "sub.bfly");
  EXPECT_EQ(storage.list(), (std::vector<std::string>{".a.bfly.0123456789abcdef.tmp", "a.bfly", "a.bfly.cu",
                                                       "b.bfly"}));
  storage.remove("a.bfly");
  EXPECT_FALSE(storage.load("a.bfly").has_value());
  EXPECT_EQ(storage.load("b.bfly"), "entry b");
  EXPECT_NO_THROW(storage.remove("a.bfly")) << "removing what is not there is no error";
}

TEST(DirectoryStorage, PublishesAtomicallyAndLeavesNoTemporaryFiles) {
  TempDir temp;
  DirectoryStorage storage(temp.path() / "nested" / "cache");
  EXPECT_FALSE(storage.load("missing.bfly").has_value());
  storage.save("a.bfly", "first");
  storage.save("a.bfly", "second");
  EXPECT_EQ(storage.load("a.bfly"), "second");
  EXPECT_EQ(files_in(storage.directory()).size(), 1u);
}

// Runs bfly_cache_fill_helper with `arguments` and extra environment `env`, without waiting.
pid_t spawn_helper(const std::vector<std::string>& arguments, const std::vector<std::string>& env = {}) {
  std::vector<std::string> all = {BFLY_CACHE_FILL_HELPER};
  all.insert(all.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& argument : all) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment_copy = env;
  for (char** variable = environ; *variable != nullptr; ++variable) environment_copy.emplace_back(*variable);
  std::vector<char*> envp;
  for (std::string& variable : environment_copy) envp.push_back(variable.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data()), 0);
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DirectoryStorage, ProcessesFillingOneCacheAtOnceAllSucceed) {
  TempDir temp;
  // Four processes miss together, compile the same generated kernel (hundreds of ms, so they overlap) and
  // publish the same entry; then a fifth finds it on disk.
  std::vector<pid_t> pids;
  for (int i = 0; i < 4; ++i) pids.push_back(spawn_helper({"1024", "directory", temp.path().string()}));
  for (pid_t pid : pids) EXPECT_EQ(wait_for(pid), 0);
  const std::vector<std::filesystem::path> files = files_in(temp.path());
  ASSERT_EQ(files.size(), 1u) << "one entry, no temporary files left";
  std::ifstream file(files[0], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::string why;
  EXPECT_TRUE(decode_entry(bytes, nullptr, &why)) << why;
  EXPECT_EQ(wait_for(spawn_helper({"1024", "directory", temp.path().string()})), 0);
}

TEST(Environment, CacheOffWritesNothing) {
  TempDir temp;
  const std::string dir = "BFLY_CACHE_DIR=" + temp.path().string();
  EXPECT_EQ(wait_for(spawn_helper({"64", "environment"}, {dir, "BFLY_CACHE=0"})), 0);
  EXPECT_TRUE(files_in(temp.path()).empty()) << "BFLY_CACHE=0 must not write to " << temp.path();
  EXPECT_EQ(wait_for(spawn_helper({"64", "environment"}, {dir, "BFLY_CACHE=1", "BFLY_CACHE_SAVE_SOURCE=1"})), 0);
  EXPECT_EQ(files_in(temp.path()).size(), 2u) << "entry and its .cu";
}

// Sets an environment variable for the scope of one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Environment, CacheDirectoryResolution) {
  ScopedEnv dir("BFLY_CACHE_DIR", "/somewhere/bfly-cache");
  ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(read_environment().cache_dir, std::filesystem::path("/somewhere/bfly-cache"));
  {
    ScopedEnv no_dir("BFLY_CACHE_DIR", nullptr);
    EXPECT_EQ(read_environment().cache_dir, std::filesystem::path("/xdg/bfly"));
    ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(read_environment().cache_dir, std::filesystem::path("/home/someone/.cache/bfly"));
  }
}

TEST(Environment, FlagsAndMalformedValues) {
  {
    ScopedEnv off("BFLY_CACHE", "0");
    ScopedEnv save("BFLY_CACHE_SAVE_SOURCE", "1");
    ScopedEnv debug("BFLY_COMPILE_WITH_DEBUG", "true");
    const Environment env = read_environment();
    EXPECT_FALSE(env.disk_cache);
    EXPECT_TRUE(env.save_source);
    EXPECT_TRUE(env.compile_with_debug);
    EXPECT_FALSE(env.dump_source_on_error);
    EXPECT_EQ(storage_from_environment(env), nullptr);
  }
  ScopedEnv bad("BFLY_DUMP_SOURCE_ON_ERROR", "sometimes");
  testing::internal::CaptureStderr();
  const Environment env = read_environment();
  const std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(env.dump_source_on_error) << "a malformed value keeps the default";
  EXPECT_NE(warning.find("BFLY_DUMP_SOURCE_ON_ERROR"), std::string::npos) << warning;
  EXPECT_NE(warning.find("\"sometimes\""), std::string::npos) << warning;
  EXPECT_NE(warning.find("0/false/off/no"), std::string::npos) << warning;
}

}  // namespace
}  // namespace bfly::rt
