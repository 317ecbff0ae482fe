// Tests of the bfly-gen command line: each runs the built binary (BFLY_GEN_PATH) as a user would and checks its
// output and exit status: the butterfly tables against the paper's figures, the ahead-of-time header (compiled
// and linked with nvcc, no GPU needed), byte-identical output, inspect and cache, the demo, help and bad flags.
#include "bfly/error.hpp"
#include "bfly/output_file.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The paper's Figure 4 (swap) for W = 16, as the slides print it ("Here is the resulting mess",
// steele-2017-ppopp-slides.txt line 473), tabs written as single spaces.
constexpr std::string_view kFigure4 = R"(A0:0 B0:0 A2:2 B2:2 A4:4 B4:4 A6:6 B6:6 A8:8 B8:8 A10:10 B10:10 A12:12 B12:12 A14:14 B14:14
A0:1 B0:1 C0:1 D0:1 A4:5 B4:5 C4:5 D4:5 A8:9 B8:9 C8:9 D8:9 A12:13 B12:13 C12:13 D12:13
C0:0 D0:0 C2:2 D2:2 C4:4 D4:4 C6:6 D6:6 C8:8 D8:8 C10:10 D10:10 C12:12 D12:12 C14:14 D14:14
A0:3 B0:3 C0:3 D0:3 E0:3 F0:3 G0:3 H0:3 A8:11 B8:11 C8:11 D8:11 E8:11 F8:11 G8:11 H8:11
E0:0 F0:0 E2:2 F2:2 E4:4 F4:4 E6:6 F6:6 E8:8 F8:8 E10:10 F10:10 E12:12 F12:12 E14:14 F14:14
E0:1 F0:1 G0:1 H0:1 E4:5 F4:5 G4:5 H4:5 E8:9 F8:9 G8:9 H8:9 E12:13 F12:13 G12:13 H12:13
G0:0 H0:0 G2:2 H2:2 G4:4 H4:4 G6:6 H6:6 G8:8 H8:8 G10:10 H10:10 G12:12 H12:12 G14:14 H14:14
A0:7 B0:7 C0:7 D0:7 E0:7 F0:7 G0:7 H0:7 I0:7 J0:7 K0:7 L0:7 M0:7 N0:7 O0:7 P0:7
I0:0 J0:0 I2:2 J2:2 I4:4 J4:4 I6:6 J6:6 I8:8 J8:8 I10:10 J10:10 I12:12 J12:12 I14:14 J14:14
I0:1 J0:1 K0:1 L0:1 I4:5 J4:5 K4:5 L4:5 I8:9 J8:9 K8:9 L8:9 I12:13 J12:13 K12:13 L12:13
K0:0 L0:0 K2:2 L2:2 K4:4 L4:4 K6:6 L6:6 K8:8 L8:8 K10:10 L10:10 K12:12 L12:12 K14:14 L14:14
I0:3 J0:3 K0:3 L0:3 M0:3 N0:3 O0:3 P0:3 I8:11 J8:11 K8:11 L8:11 M8:11 N8:11 O8:11 P8:11
M0:0 N0:0 M2:2 N2:2 M4:4 N4:4 M6:6 N6:6 M8:8 N8:8 M10:10 N10:10 M12:12 N12:12 M14:14 N14:14
M0:1 N0:1 O0:1 P0:1 M4:5 N4:5 O4:5 P4:5 M8:9 N8:9 O8:9 P8:9 M12:13 N12:13 O12:13 P12:13
O0:0 P0:0 O2:2 P2:2 O4:4 P4:4 O6:6 P6:6 O8:8 P8:8 O10:10 P10:10 O12:12 P12:12 O14:14 P14:14
A0:15 B0:15 C0:15 D0:15 E0:15 F0:15 G0:15 H0:15 I0:15 J0:15 K0:15 L0:15 M0:15 N0:15 O0:15 P0:15
)";

// Figure 8 (addsub) for W = 16, from the slides ("This Computes a Different Pattern", line 723).
constexpr std::string_view kFigure8 = R"(A0:0 B1:1 A2:2 B3:3 A4:4 B5:5 A6:6 B7:7 A8:8 B9:9 A10:10 B11:11 A12:12 B13:13 A14:14 B15:15
A0:1 B0:1 C2:3 D2:3 A4:5 B4:5 C6:7 D6:7 A8:9 B8:9 C10:11 D10:11 A12:13 B12:13 C14:15 D14:15
C0:0 D1:1 C2:2 D3:3 C4:4 D5:5 C6:6 D7:7 C8:8 D9:9 C10:10 D11:11 C12:12 D13:13 C14:14 D15:15
A0:3 B0:3 C0:3 D0:3 E4:7 F4:7 G4:7 H4:7 A8:11 B8:11 C8:11 D8:11 E12:15 F12:15 G12:15 H12:15
E0:0 F1:1 E2:2 F3:3 E4:4 F5:5 E6:6 F7:7 E8:8 F9:9 E10:10 F11:11 E12:12 F13:13 E14:14 F15:15
E0:1 F0:1 G2:3 H2:3 E4:5 F4:5 G6:7 H6:7 E8:9 F8:9 G10:11 H10:11 E12:13 F12:13 G14:15 H14:15
G0:0 H1:1 G2:2 H3:3 G4:4 H5:5 G6:6 H7:7 G8:8 H9:9 G10:10 H11:11 G12:12 H13:13 G14:14 H15:15
A0:7 B0:7 C0:7 D0:7 E0:7 F0:7 G0:7 H0:7 I8:15 J8:15 K8:15 L8:15 M8:15 N8:15 O8:15 P8:15
I0:0 J1:1 I2:2 J3:3 I4:4 J5:5 I6:6 J7:7 I8:8 J9:9 I10:10 J11:11 I12:12 J13:13 I14:14 J15:15
I0:1 J0:1 K2:3 L2:3 I4:5 J4:5 K6:7 L6:7 I8:9 J8:9 K10:11 L10:11 I12:13 J12:13 K14:15 L14:15
K0:0 L1:1 K2:2 L3:3 K4:4 L5:5 K6:6 L7:7 K8:8 L9:9 K10:10 L11:11 K12:12 L13:13 K14:14 L15:15
I0:3 J0:3 K0:3 L0:3 M4:7 N4:7 O4:7 P4:7 I8:11 J8:11 K8:11 L8:11 M12:15 N12:15 O12:15 P12:15
M0:0 N1:1 M2:2 N3:3 M4:4 N5:5 M6:6 N7:7 M8:8 N9:9 M10:10 N11:11 M12:12 N13:13 M14:14 N15:15
M0:1 N0:1 O2:3 P2:3 M4:5 N4:5 O6:7 P6:7 M8:9 N8:9 O10:11 P10:11 M12:13 N12:13 O14:15 P14:15
O0:0 P1:1 O2:2 P3:3 O4:4 P5:5 O6:6 P7:7 O8:8 P9:9 O10:10 P11:11 O12:12 P13:13 O14:14 P15:15
A0:15 B0:15 C0:15 D0:15 E0:15 F0:15 G0:15 H0:15 I0:15 J0:15 K0:15 L0:15 M0:15 N0:15 O0:15 P0:15
)";

std::string quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

struct Result {
  int status = -1;  // exit status, -1 when the process did not exit normally
  std::string out;
  std::string err;
};

// Runs a shell command line, capturing standard output and standard error.
Result run_shell(const std::string& command, const fs::path& scratch) {
  const fs::path err_file = scratch / "stderr.txt";
  const std::string line = command + " 2>" + quote(err_file.string());
  Result result;
  FILE* pipe = popen(line.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.out.append(buffer, n);
  const int raw = pclose(pipe);
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  result.err = read_file(err_file);
  return result;
}

// Each test gets its own scratch directory, which also holds its kernel cache (never the user's).
class BflyGen : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name)
      if (c == '/') c = '_';
    scratch_ = fs::temp_directory_path() / ("bfly_tools_" + std::to_string(getpid()) + "_" + name);
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(scratch_);
  }

  // Runs bfly-gen with `arguments` (a shell-quoted string).
  Result bfly_gen(const std::string& arguments) const {
    return run_shell("env BFLY_CACHE_DIR=" + quote((scratch_ / "cache").string()) + " " + quote(BFLY_GEN_PATH) +
                         " " + arguments,
                     scratch_);
  }

  fs::path scratch_;
};

// ---------------------------------------------------------------------------------------------------------
// bfly-gen table: the generated build, run on the CPU, prints the paper's figures
// ---------------------------------------------------------------------------------------------------------
TEST_F(BflyGen, TableW16AddsubIsFigure8) {
  const Result r = bfly_gen("table --W 16 --variant addsub");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, kFigure8);
}

TEST_F(BflyGen, TableW16SwapIsFigure4) {
  const Result r = bfly_gen("table --W 16 --variant swap");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, kFigure4);
}

TEST_F(BflyGen, TableDefaultsToFigure8) {
  const Result r = bfly_gen("table");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, kFigure8);
}

TEST_F(BflyGen, TableW32WritesLanesAsNumbers) {
  for (const std::string variant : {"addsub", "swap"}) {
    SCOPED_TRACE(variant);
    const Result r = bfly_gen("table --W 32 --variant " + variant);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::vector<std::string> rows = lines_of(r.out);
    ASSERT_EQ(rows.size(), 32u);
    for (const std::string& row : rows) {
      EXPECT_EQ(words_of(row).size(), 32u) << row;
      EXPECT_EQ(row.find_first_of("\t\r"), std::string::npos) << "cells must be separated by single spaces: " << row;
      EXPECT_EQ(row.find("  "), std::string::npos) << "cells must be separated by single spaces: " << row;
    }
    // Cells from docs/DESIGN.md section 4 (m = i xor (i + 1), k = m >> 1, lane L = (i & ~m) + (j & m), first index
    // y = j & ~m for swap, j & ~k for addsub, last y + k): row 0 lane 17, row 15 lane 17, row 17 lane 1.
    const std::vector<std::string> row0 = words_of(rows[0]);
    EXPECT_EQ(row0[17], variant == "addsub" ? "1.17:17" : "1.16:16");
    EXPECT_EQ(words_of(rows[15])[17], variant == "addsub" ? "17.16:31" : "17.0:15");
    EXPECT_EQ(words_of(rows[17])[1], "17.0:1");
    const std::vector<std::string> last = words_of(rows[31]);
    for (int j = 0; j < 32; ++j) EXPECT_EQ(last[j], std::to_string(j) + ".0:31");
  }
}

TEST_F(BflyGen, TableSmallWidths) {
  const Result r = bfly_gen("table --W 4 --variant swap");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "A0:0 B0:0 A2:2 B2:2\nA0:1 B0:1 C0:1 D0:1\nC0:0 D0:0 C2:2 D2:2\nA0:3 B0:3 C0:3 D0:3\n");
}

// ---------------------------------------------------------------------------------------------------------
// bfly-gen generate / show
// ---------------------------------------------------------------------------------------------------------
constexpr std::string_view kExampleFlags = "--K 1024 --W 32 --type f32 --variant addsub --remnant 8";

TEST_F(BflyGen, GenerateIsByteIdenticalAndWritesOnlyWhenChanged) {
  const Result first = bfly_gen("generate " + std::string(kExampleFlags));
  const Result second = bfly_gen("generate " + std::string(kExampleFlags) + " -o -");
  ASSERT_EQ(first.status, 0) << first.err;
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_FALSE(first.out.empty());
  EXPECT_EQ(first.out, second.out);

  const fs::path header = scratch_ / "sampler.cuh";
  const Result wrote = bfly_gen("generate " + std::string(kExampleFlags) + " -o " + quote(header.string()));
  ASSERT_EQ(wrote.status, 0) << wrote.err;
  EXPECT_NE(wrote.out.find("wrote"), std::string::npos) << wrote.out;
  EXPECT_EQ(read_file(header), first.out);
  struct stat before {};
  ASSERT_EQ(stat(header.c_str(), &before), 0);

  const Result again = bfly_gen("generate --output=" + quote(header.string()) + " " + std::string(kExampleFlags));
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("unchanged"), std::string::npos) << again.out;
  struct stat after {};
  ASSERT_EQ(stat(header.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino) << "an unchanged header must not be replaced";
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);

  const Result other = bfly_gen("generate --K 1000 -o " + quote(header.string()));
  ASSERT_EQ(other.status, 0) << other.err;
  EXPECT_NE(read_file(header), first.out);
  EXPECT_NE(read_file(header).find("bfly_sample_f32_w16_k1000_r8_addsub_launch("), std::string::npos);
}

// -o writes only regular files: directories, FIFOs and links to devices are refused with a message that says what
// the path is, and are left as they were. `-o /dev/full` itself is not run: as root, the old
// bfly-gen replaced the device node; links in the scratch directory show the same without that risk.
TEST_F(BflyGen, GenerateRefusesOutputsThatAreNotRegularFiles) {
  const fs::path dir = scratch_ / "a_directory";
  fs::create_directories(dir);
  const Result d = bfly_gen("generate --K 100 -o " + quote(dir.string()));
  EXPECT_NE(d.status, 0);
  EXPECT_NE(d.err.find("is a directory"), std::string::npos) << d.err;
  EXPECT_EQ(d.err.find("Success"), std::string::npos) << d.err;

  const fs::path fifo = scratch_ / "a_fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // (the old bfly-gen blocked here forever, opening the FIFO to compare its contents)
  const Result f = bfly_gen("generate --K 100 -o " + quote(fifo.string()) + " 2>&1; echo status=$?");
  EXPECT_NE(f.out.find("status=1"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("FIFO"), std::string::npos) << f.out;
  EXPECT_TRUE(fs::is_fifo(fifo));

  for (const char* device : {"/dev/null", "/dev/full"}) {
    const fs::path link = scratch_ / (std::string("link_to_") + (device + 5));
    fs::create_symlink(device, link);
    const Result r = bfly_gen("generate --K 100 -o " + quote(link.string()));
    EXPECT_NE(r.status, 0) << device;
    EXPECT_NE(r.err.find("character device"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::is_symlink(link)) << "the link to " << device << " was replaced";
  }

  // `-o -` is standard output; a full standard output is an error that says so.
  const Result full = bfly_gen("generate --K 100 -o - >/dev/full");
  EXPECT_EQ(full.status, 1);
  EXPECT_NE(full.err.find("disk full"), std::string::npos) << full.err;
}

// The writer reports ENOSPC as a full disk, naming the file, not as a permissions problem.
TEST(OutputFile, AFullDiskIsReportedAsDiskFull) {
  const int fd = open("/dev/full", O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string data(100000, 'x');
  try {
    bfly::write_all(fd, data.data(), data.size(), "some/output.cuh");
    ADD_FAILURE() << "writing to /dev/full succeeded";
  } catch (const bfly::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("some/output.cuh"), std::string::npos) << message;
    EXPECT_NE(message.find("disk full"), std::string::npos) << message;
    EXPECT_EQ(message.find("writable"), std::string::npos) << message;
  }
  close(fd);
  EXPECT_EQ(bfly::describe_errno(ENOSPC).rfind("disk full", 0), 0u);
}

// A second run of the day gets a file of its own: the first name is STEM SUFFIX, then STEM-2 SUFFIX, STEM-3 SUFFIX,
// never one that is there (an earlier run's results are kept, whatever they hold).
TEST(OutputFile, CreateUnusedFileNeverTakesAFileThatIsThere) {
  const fs::path dir = fs::temp_directory_path() / ("bfly-unused-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string first = bfly::create_unused_file((dir / "new").string(), "h100-2026-11-28", "-sampling.csv");
  EXPECT_EQ(first, (dir / "new" / "h100-2026-11-28-sampling.csv").string()) << "the directory is created";
  EXPECT_TRUE(fs::is_regular_file(first));
  {
    bfly::OutputFile out(first);
    out.text("first run\n");
    out.commit();
  }
  const std::string second = bfly::create_unused_file((dir / "new").string(), "h100-2026-11-28", "-sampling.csv");
  EXPECT_EQ(second, (dir / "new" / "h100-2026-11-28-2-sampling.csv").string());
  const std::string third = bfly::create_unused_file((dir / "new").string(), "h100-2026-11-28", "-sampling.csv");
  EXPECT_EQ(third, (dir / "new" / "h100-2026-11-28-3-sampling.csv").string());
  std::ifstream kept(first);
  std::string line;
  std::getline(kept, line);
  EXPECT_EQ(line, "first run") << "the first run's file was touched";
  // A directory that cannot be made (a file in the way) is an error that names it and the cause.
  std::ofstream(dir / "a-file") << "x";
  try {
    bfly::create_unused_file((dir / "a-file" / "results").string(), "x", ".csv");
    ADD_FAILURE() << "a file was created under a regular file";
  } catch (const bfly::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("a-file"), std::string::npos) << message;
    EXPECT_NE(message.find("ot a directory"), std::string::npos) << message;
  }
  fs::remove_all(dir);
}

TEST_F(BflyGen, GenerateWritesAGuardedHeaderWithALaunchFunction) {
  const Result r = bfly_gen("generate " + std::string(kExampleFlags));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("#ifndef BFLY_SAMPLE_F32_W32_K1024_R8_ADDSUB_CUH"), std::string::npos);
  EXPECT_NE(r.out.find("#ifdef __CUDACC__"), std::string::npos);
  EXPECT_NE(r.out.find("inline cudaError_t bfly_sample_f32_w32_k1024_r8_addsub_launch(\n    const float* weights"),
            std::string::npos);
  EXPECT_EQ(r.out.find("#include \"bfly/"), std::string::npos) << "the header must be self-contained";
}

// The header of `bfly-gen generate` compiles with nvcc, and two kernels in two translation units link into one
// program whose launch functions check their arguments (M == 0 returns cudaSuccess; no GPU is touched).
TEST_F(BflyGen, GeneratedHeadersCompileAndLinkWithNvcc) {
  const std::string nvcc = BFLY_NVCC_PATH;
  ASSERT_TRUE(fs::exists(nvcc)) << "nvcc not found at " << nvcc << " (the CUDA toolkit is required)";
  ASSERT_EQ(bfly_gen("generate " + std::string(kExampleFlags) + " -o " + quote((scratch_ / "a.cuh").string())).status, 0);
  ASSERT_EQ(bfly_gen("generate --K 100 --W 16 --type f64 --variant swap --remnant 0 -o " +
                     quote((scratch_ / "b.cuh").string()))
                .status,
            0);
  write_file(scratch_ / "a.cu",
             "#include \"a.cuh\"\n"
             "cudaError_t sample_a(const float* w, long long M, int* out) {\n"
             "  return bfly_sample_f32_w32_k1024_r8_addsub_launch(w, M, 1024, out, nullptr, 42, 0);\n"
             "}\n");
  write_file(scratch_ / "b.cu",
             "#include \"b.cuh\"\n"
             "cudaError_t sample_b(const double* w, long long M, long long ld, int* out, cudaStream_t s) {\n"
             "  return bfly_sample_f64_w16_k100_r0_swap_launch(w, M, ld, out, nullptr, 7, 1, s);\n"
             "}\n");
  write_file(scratch_ / "main.cu",
             "#include <cstdio>\n"
             "cudaError_t sample_a(const float*, long long, int*);\n"
             "cudaError_t sample_b(const double*, long long, long long, int*, cudaStream_t);\n"
             "int main() {\n"
             "  std::printf(\"%d %d %d %d\\n\", (int)sample_a(nullptr, 0, nullptr), (int)sample_b(nullptr, 0, 100, "
             "nullptr, 0),\n"
             "              (int)sample_a(nullptr, 5, nullptr), (int)sample_b(nullptr, 0, 99, nullptr, 0));\n"
             "}\n");
  const std::string dir = quote(scratch_.string());
  const Result compile = run_shell("cd " + dir + " && " + quote(nvcc) + " -arch=sm_90 -c a.cu -o a.o && " +
                                       quote(nvcc) + " -arch=sm_90 -c b.cu -o b.o 2>&1",
                                   scratch_);
  ASSERT_EQ(compile.status, 0) << compile.out << compile.err;
  const Result link =
      run_shell("cd " + dir + " && " + quote(nvcc) + " -arch=sm_90 a.o b.o main.cu -o program 2>&1", scratch_);
  ASSERT_EQ(link.status, 0) << link.out << link.err;
  const Result program = run_shell(quote((scratch_ / "program").string()), scratch_);
  ASSERT_EQ(program.status, 0) << program.err;
  // cudaSuccess (0) for M == 0; cudaErrorInvalidValue (1) for null pointers with M > 0 and for ld < K.
  EXPECT_EQ(program.out, "0 0 1 1\n");
}

// Headers of two specs in one translation unit: the pasted fragments' include guards define them once.
TEST_F(BflyGen, TwoGeneratedHeadersShareOneTranslationUnit) {
  const std::string nvcc = BFLY_NVCC_PATH;
  ASSERT_EQ(bfly_gen("generate --K 100 --W 16 -o " + quote((scratch_ / "a.cuh").string())).status, 0);
  ASSERT_EQ(bfly_gen("generate --operation lda_z --K 64 --W 8 --type f64 -o " + quote((scratch_ / "b.cuh").string()))
                .status,
            0);
  write_file(scratch_ / "both.cu", "#include \"a.cuh\"\n#include \"b.cuh\"\nint main() { return 0; }\n");
  const Result compile = run_shell("cd " + quote(scratch_.string()) + " && " + quote(nvcc) +
                                       " -arch=sm_90 both.cu -o both 2>&1",
                                   scratch_);
  EXPECT_EQ(compile.status, 0) << compile.out << compile.err;
}

TEST_F(BflyGen, LdaZHeaderCompilesWithNvcc) {
  const std::string nvcc = BFLY_NVCC_PATH;
  ASSERT_TRUE(fs::exists(nvcc)) << "nvcc not found at " << nvcc << " (the CUDA toolkit is required)";
  const Result r = bfly_gen("generate --operation lda_z --K 256 --W 16 --type f64 -o " +
                            quote((scratch_ / "lda.cuh").string()));
  ASSERT_EQ(r.status, 0) << r.err;
  write_file(scratch_ / "lda.cu",
             "#include \"lda.cuh\"\n"
             "cudaError_t step(const double* theta, const double* phi, const long long* offsets, const int* words,\n"
             "                 int* z, long long D) {\n"
             "  return bfly_lda_z_f64_w16_k256_r8_swap_launch(theta, 256, phi, 256, offsets, words, z, D, nullptr,\n"
             "                                                  0.0, 0.0, nullptr, 1, 0);\n"
             "}\n");
  const Result compile = run_shell("cd " + quote(scratch_.string()) + " && " + quote(nvcc) +
                                       " -arch=sm_90 -c lda.cu -o lda.o 2>&1",
                                   scratch_);
  EXPECT_EQ(compile.status, 0) << compile.out << compile.err;
}

// --no-warp-copies: the kernel of the spec with its warps' copies off, named with _nocopy, with no copy in its source,
// and said again in the line that regenerates it; refused where no kernel copies (LDA, the forms, sample_split).
TEST_F(BflyGen, NoWarpCopiesNamesAndGeneratesTheKernelWithoutCopies) {
  const Result off = bfly_gen("show --K 561 --type bf16 --no-warp-copies");
  ASSERT_EQ(off.status, 0) << off.err;
  EXPECT_NE(off.out.find("// bfly_sample_pairs_bf16_w16_k561_r8_addsub_nocopy\n"), std::string::npos);
  EXPECT_NE(off.out.find("--variant addsub --no-warp-copies`."), std::string::npos);
  EXPECT_EQ(off.out.find("start_rows_copy("), std::string::npos) << "no copy in a kernel without copies";
  const Result on = bfly_gen("show --K 561 --type bf16");
  ASSERT_EQ(on.status, 0) << on.err;
  EXPECT_NE(on.out.find("start_rows_copy("), std::string::npos) << "the rule's copy where copies are on";
  const Result named = bfly_gen("show bfly_sample_pairs_bf16_w16_k561_r8_addsub_nocopy");
  ASSERT_EQ(named.status, 0) << named.err;
  EXPECT_EQ(named.out, off.out);
  const Result lda = bfly_gen("show --K 100 --operation lda_z --no-warp-copies");
  EXPECT_EQ(lda.status, 2);
  EXPECT_NE(lda.err.find("--no-warp-copies applies to --operation sample and sample_pairs only"), std::string::npos)
      << lda.err;
  const Result split = bfly_gen("show --K 100000 --no-warp-copies");
  EXPECT_EQ(split.status, 2);
  EXPECT_NE(split.err.find("--no-warp-copies: warp_copies = false is not allowed for sample_split"), std::string::npos)
      << split.err;
}

// --ring-anywhere: the kernel whose ring stages rows on 16 bytes as rows that start anywhere (each row read at its own
// place in the ring), named with _anywhere; refused where the ring would stage the rows anywhere already. f64 K = 178
// (off sectors, under the K = 182 from which the rule stages them anywhere without fast memory) keeps every row of a
// tile at one place by default; K = 182 is staged anywhere by the rule, and its regenerate line says so.
TEST_F(BflyGen, RingAnywhereNamesAndGeneratesTheKernelStagedAnywhere) {
  const Result anywhere = bfly_gen("show --K 178 --type f64 --variant swap --ring-anywhere");
  ASSERT_EQ(anywhere.status, 0) << anywhere.err;
  EXPECT_NE(anywhere.out.find("// bfly_sample_f64_w16_k178_r8_swap_anywhere\n"), std::string::npos);
  EXPECT_NE(anywhere.out.find("--variant swap --ring-anywhere`."), std::string::npos);
  EXPECT_NE(anywhere.out.find("places[s] = "), std::string::npos) << "each row at its own place in the ring";
  const Result at_one_place = bfly_gen("show --K 178 --type f64 --variant swap");
  ASSERT_EQ(at_one_place.status, 0) << at_one_place.err;
  EXPECT_EQ(at_one_place.out.find("places[s] = "), std::string::npos) << "every row of a tile at one place";
  const Result named = bfly_gen("show bfly_sample_f64_w16_k178_r8_swap_anywhere");
  ASSERT_EQ(named.status, 0) << named.err;
  EXPECT_EQ(named.out, anywhere.out);
  const Result by_rule = bfly_gen("show --K 182 --type f64 --variant swap");
  ASSERT_EQ(by_rule.status, 0) << by_rule.err;
  EXPECT_NE(by_rule.out.find("// bfly_sample_f64_w16_k182_r8_swap_anywhere\n"), std::string::npos);
  EXPECT_NE(by_rule.out.find("--variant swap --ring-anywhere`."), std::string::npos);
  const Result odd = bfly_gen("show --K 181 --type f64 --ring-anywhere");
  EXPECT_EQ(odd.status, 2);
  EXPECT_NE(odd.err.find("--ring-anywhere: ring_anywhere = true is not allowed for sample K = 181 f64"),
            std::string::npos) << odd.err;
  const Result lda = bfly_gen("show --K 182 --operation lda_z --ring-anywhere");
  EXPECT_EQ(lda.status, 2);
  EXPECT_NE(lda.err.find("--ring-anywhere applies to --operation sample and sample_pairs only"), std::string::npos)
      << lda.err;
}

// --ring-row-order: the kernel named _roworder, its ring's slots in row order and the flag in its regenerate line;
// refused where the rule reads in row order already, and for LDA. The rule reads f64 odd K from 181 in row order; with
// W forced (the rules that stage rows then stand aside) K = 181 keeps the permuted slots.
TEST_F(BflyGen, RingRowOrderNamesAndGeneratesTheKernelInRowOrder) {
  const Result row_order = bfly_gen("show --K 181 --type f64 --variant swap --W 16 --ring-row-order");
  ASSERT_EQ(row_order.status, 0) << row_order.err;
  EXPECT_NE(row_order.out.find("// bfly_sample_f64_w16_k181_r8_swap_roworder\n"), std::string::npos);
  EXPECT_NE(row_order.out.find("--variant swap --ring-row-order`."), std::string::npos);
  EXPECT_NE(row_order.out.find("into slot s row s ("), std::string::npos) << "slot s holds row s";
  const Result permuted = bfly_gen("show --K 181 --type f64 --variant swap --W 16");
  ASSERT_EQ(permuted.status, 0) << permuted.err;
  EXPECT_NE(permuted.out.find("into slot s row s ^ (r & 3)"), std::string::npos) << "the permuted slots";
  const Result named = bfly_gen("show bfly_sample_f64_w16_k181_r8_swap_roworder");
  ASSERT_EQ(named.status, 0) << named.err;
  EXPECT_EQ(named.out, row_order.out);
  const Result by_rule = bfly_gen("show --K 181 --type f64 --variant swap");
  ASSERT_EQ(by_rule.status, 0) << by_rule.err;
  EXPECT_EQ(by_rule.out, row_order.out) << "the rule's kernel";
  const Result already = bfly_gen("show --K 1001 --type f64 --ring-row-order");
  EXPECT_EQ(already.status, 2);
  EXPECT_NE(already.err.find("--ring-row-order: ring_row_order = true is not allowed for sample K = 1001 f64"),
            std::string::npos) << already.err;
  const Result lda = bfly_gen("show --K 181 --operation lda_z --ring-row-order");
  EXPECT_EQ(lda.status, 2);
  EXPECT_NE(lda.err.find("--ring-row-order applies to --operation sample and sample_pairs only"), std::string::npos)
      << lda.err;
}

// --ring-deep: the kernel named _deep, the deep ring (8 lines a row, one-warp CTAs) and the flag in its regenerate line;
// refused where the ring is deep already (K = 1017, 16 lines of blocks) and for LDA.
TEST_F(BflyGen, RingDeepNamesAndGeneratesTheDeepRing) {
  const Result deep = bfly_gen("show --K 721 --type bf16 --operation sample_pairs --W 16 --ring-deep");
  ASSERT_EQ(deep.status, 0) << deep.err;
  EXPECT_NE(deep.out.find("// bfly_sample_pairs_bf16_w16_k721_r8_addsub_deep\n"), std::string::npos);
  EXPECT_NE(deep.out.find("--variant addsub --ring-deep`."), std::string::npos);
  EXPECT_NE(deep.out.find("constexpr int STAGES = 8;"), std::string::npos);
  EXPECT_NE(deep.out.find("constexpr int THREADS = 32;"), std::string::npos);
  const Result shallow = bfly_gen("show --K 721 --type bf16 --operation sample_pairs --W 16");
  ASSERT_EQ(shallow.status, 0) << shallow.err;
  EXPECT_NE(shallow.out.find("constexpr int STAGES = 4;"), std::string::npos) << "the rule's shallow ring";
  const Result named = bfly_gen("show bfly_sample_pairs_bf16_w16_k721_r8_addsub_deep");
  ASSERT_EQ(named.status, 0) << named.err;
  EXPECT_EQ(named.out, deep.out);
  const Result already = bfly_gen("show --K 1017 --type bf16 --operation sample_pairs --W 16 --ring-deep");
  EXPECT_EQ(already.status, 2);
  EXPECT_NE(already.err.find("--ring-deep: ring_deep = true is not allowed for sample_pairs K = 1017 bf16"),
            std::string::npos) << already.err;
  const Result lda = bfly_gen("show --K 721 --operation lda_z --ring-deep");
  EXPECT_EQ(lda.status, 2);
  EXPECT_NE(lda.err.find("--ring-deep applies to --operation sample and sample_pairs only"), std::string::npos)
      << lda.err;
}

// Logits without replacement from --input and --draws: the header's launch function takes the temperature and
// num_samples after ld, and compiles with nvcc.
TEST_F(BflyGen, LogitsHeaderCompilesWithNvcc) {
  const std::string nvcc = BFLY_NVCC_PATH;
  ASSERT_TRUE(fs::exists(nvcc)) << "nvcc not found at " << nvcc << " (the CUDA toolkit is required)";
  const Result r = bfly_gen("generate --K 256 --W 16 --type bf16 --input logits --draws without_replacement -o " +
                            quote((scratch_ / "logits.cuh").string()));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("bfly_sample_logits_distinct_bf16_w16_k256_r8_addsub"), std::string::npos) << r.out;
  write_file(scratch_ / "logits.cu",
             "#include \"logits.cuh\"\n"
             "cudaError_t draw(const bfly::bf16_bits* logits, long long M, int* out) {\n"
             "  return bfly_sample_logits_distinct_bf16_w16_k256_r8_addsub_launch(logits, M, 256, 0.7, 4, out,\n"
             "                                                                    nullptr, 1, 0);\n"
             "}\n");
  const Result compile = run_shell("cd " + quote(scratch_.string()) + " && " + quote(nvcc) +
                                       " -arch=sm_90 -c logits.cu -o logits.o 2>&1",
                                   scratch_);
  EXPECT_EQ(compile.status, 0) << compile.out << compile.err;
  // Logits with one draw is not a kernel: --draws says so.
  const Result one = bfly_gen("show --K 256 --input logits --draws one");
  EXPECT_EQ(one.status, 2);
  EXPECT_NE(one.err.find("--draws one: "), std::string::npos) << one.err;
  const Result lda = bfly_gen("show --K 256 --operation lda_z --input logits");
  EXPECT_EQ(lda.status, 2);
  EXPECT_NE(lda.err.find("--input and --draws apply to --operation sample and sample_split only"), std::string::npos)
      << lda.err;
}

// sample_split's logits form: the launch function takes the temperature and num_samples after ld and the scratch
// after the counters, covers M rows with CTAS_PER_ROW CTAs each, and compiles with nvcc; without replacement the
// split kernel refuses.
TEST_F(BflyGen, SplitLogitsHeaderCompilesWithNvcc) {
  const std::string nvcc = BFLY_NVCC_PATH;
  ASSERT_TRUE(fs::exists(nvcc)) << "nvcc not found at " << nvcc << " (the CUDA toolkit is required)";
  const Result r = bfly_gen("generate --operation sample_split --K 128256 --type bf16 --input logits -o " +
                            quote((scratch_ / "split.cuh").string()));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("bfly_sample_split_logits_bf16_w32_k128256_r0_addsub"), std::string::npos) << r.out;
  write_file(scratch_ / "split.cu",
             "#include \"split.cuh\"\n"
             "cudaError_t draw(const bfly::bf16_bits* logits, long long M, int* out, float* parts,\n"
             "                 unsigned long long* arrivals) {\n"
             "  return bfly_sample_split_logits_bf16_w32_k128256_r0_addsub_launch(logits, M, 0, 128256, 0.7, 4,\n"
             "                                                                   out, nullptr, parts, arrivals, 1, 0);\n"
             "}\n");
  const Result compile = run_shell("cd " + quote(scratch_.string()) + " && " + quote(nvcc) +
                                       " -arch=sm_90 -c split.cu -o split.o 2>&1",
                                   scratch_);
  EXPECT_EQ(compile.status, 0) << compile.out << compile.err;
  const Result distinct =
      bfly_gen("show --operation sample_split --K 128256 --input logits --draws without_replacement");
  EXPECT_EQ(distinct.status, 0) << distinct.err;
  for (const char* piece : {"bfly_sample_split_logits_distinct_f32_w32_k128256_r0_addsub", "constexpr int REDRAWS = 8;",
                            "if (num_samples > MAX_DRAWS) __trap();", "bfly::exclude_drawn(a, tile, r, drawn, first);",
                            "bfly::accept_distinct_round("})
    EXPECT_NE(distinct.out.find(piece), std::string::npos) << piece;
}

// The one-document-per-group z-step: its launch function covers D documents with W threads each.
TEST_F(BflyGen, LdaZDocHeaderCompilesWithNvcc) {
  const std::string nvcc = BFLY_NVCC_PATH;
  ASSERT_TRUE(fs::exists(nvcc)) << "nvcc not found at " << nvcc << " (the CUDA toolkit is required)";
  const Result r = bfly_gen("generate --operation lda_z_doc --K 1024 --W 32 --type f32 -o " +
                            quote((scratch_ / "doc.cuh").string()));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string header = read_file(scratch_ / "doc.cuh");
  EXPECT_NE(header.find("constexpr long long kItemsPerCta = 2;  // documents per CTA"), std::string::npos) << header.substr(0, 3000);
  EXPECT_NE(header.find("64 threads per CTA, 2 documents per CTA, ceil(D / 2) CTAs"), std::string::npos);
  write_file(scratch_ / "doc.cu",
             "#include \"doc.cuh\"\n"
             "cudaError_t step(const float* theta, const float* phi, const long long* offsets, const int* words,\n"
             "                 int* z, long long D, const int* topic_counts) {\n"
             "  // the collapsed z-step: n_k of z, alpha_sum = 1024 * 0.1, V * beta = 50000 * 0.01\n"
             "  return bfly_lda_z_doc_f32_w32_k1024_r8_addsub_launch(theta, 1024, phi, 1024, offsets, words, z, D,\n"
             "                                                       topic_counts, 102.4, 500.0, nullptr, 1, 0);\n"
             "}\n");
  const Result compile = run_shell("cd " + quote(scratch_.string()) + " && " + quote(nvcc) +
                                       " -arch=sm_90 -c doc.cu -o doc.o 2>&1",
                                   scratch_);
  EXPECT_EQ(compile.status, 0) << compile.out << compile.err;
}

// Compiled as C++ after bfly/lockstep.hpp, the same header runs its kernel on the CPU (no launch function).
TEST_F(BflyGen, GeneratedHeaderRunsOnTheCpuAfterLockstep) {
  ASSERT_EQ(bfly_gen("generate --K 100 -o " + quote((scratch_ / "k.cuh").string())).status, 0);
  write_file(scratch_ / "main.cpp",
             "#include \"bfly/lockstep.hpp\"\n"
             "#include \"k.cuh\"\n"
             "#include <cstdio>\n"
             "#include <vector>\n"
             "int main() {\n"
             "  const long long M = 200, K = 100;\n"
             "  std::vector<float> w(M * K, 0.0f);\n"
             "  for (long long r = 0; r < M; ++r) w[r * K + (r * 7) % K] = 1.0f;  // row r: one-hot at 7r mod K\n"
             "  w[3 * K + 50] = -1.0f;                                        // row 3: invalid\n"
             "  std::vector<int> out(M, -2);\n"
             "  unsigned long long invalid[2] = {0, ~0ull};\n"
             "  // The launch contract: THREADS threads per CTA (the kernel's constant), a CTA per THREADS rows.\n"
             "  constexpr int threads = bfly_sample_f32_w16_k100_r8_addsub_detail::THREADS;\n"
             "  bfly::lockstep::launch(bfly_sample_f32_w16_k100_r8_addsub, dim3((M + threads - 1) / threads),\n"
             "                         dim3(threads), w.data(), M, K, out.data(), invalid, 42ull, 0u);\n"
             "  long long wrong = 0;\n"
             "  for (long long r = 0; r < M; ++r) wrong += out[r] != (r == 3 ? -1 : int((r * 7) % K));\n"
             "  std::printf(\"%lld %llu %llu\\n\", wrong, invalid[0], invalid[1]);\n"
             "}\n");
  const Result build = run_shell("cd " + quote(scratch_.string()) + " && " + quote(BFLY_CXX_PATH) +
                                     " -std=c++20 -O1 -pthread -I " + quote(BFLY_TEMPLATES_DIR) + " -I " + quote(BFLY_CPU_INCLUDE_DIR) +
                                     " -I " + quote(BFLY_JIT_INCLUDE_DIR) +
                                     " main.cpp -o program 2>&1",
                                 scratch_);
  ASSERT_EQ(build.status, 0) << build.out << build.err;
  const Result program = run_shell(quote((scratch_ / "program").string()), scratch_);
  ASSERT_EQ(program.status, 0) << program.out << program.err;
  EXPECT_EQ(program.out, "0 1 3\n") << "wrong draws, invalid-row count, first invalid row";
}

TEST_F(BflyGen, ShowAcceptsAKernelNameOrFlags) {
  const Result by_name = bfly_gen("show bfly_sample_f32_w32_k1024_r8_addsub");
  const Result by_flags = bfly_gen("show " + std::string(kExampleFlags));
  ASSERT_EQ(by_name.status, 0) << by_name.err;
  ASSERT_EQ(by_flags.status, 0) << by_flags.err;
  EXPECT_EQ(by_name.out, by_flags.out);
  EXPECT_NE(by_name.out.find("extern \"C\" __global__"), std::string::npos);
  EXPECT_NE(by_name.out.find("bfly_sample_f32_w32_k1024_r8_addsub("), std::string::npos);
  EXPECT_NE(by_name.out.find("#include \"bfly/philox.cuh\""), std::string::npos);

  const Result pasted = bfly_gen("show bfly_sample_f32_w32_k1024_r8_addsub --inline");
  ASSERT_EQ(pasted.status, 0) << pasted.err;
  EXPECT_EQ(pasted.out.find("#include \"bfly/"), std::string::npos);
  EXPECT_GT(pasted.out.size(), by_name.out.size());
}

TEST_F(BflyGen, ShowDefaultsFollowTheSamplerRule) {
  // Without --W, --remnant, --type, --variant: gen::choose_sample_spec (W = 8 for K = 12), R = min(8, W - 1).
  const Result r = bfly_gen("show --K 12 --operation sample");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("bfly_sample_f32_w8_k12_r7_addsub("), std::string::npos);
  // Without --operation as well: the Sampler's kernel for K = 12 is sample_small; for K = 262144, sample_split (over
  // pairs for 16-bit weights).
  const Result small = bfly_gen("show --K 12");
  ASSERT_EQ(small.status, 0) << small.err;
  EXPECT_NE(small.out.find("bfly_sample_small_f32_w32_k12_r0_addsub("), std::string::npos);
  const Result split = bfly_gen("show --K 262144 --type bf16");
  ASSERT_EQ(split.status, 0) << split.err;
  EXPECT_NE(split.out.find("bfly_sample_split_pairs_bf16_w32_k262144_r0_addsub("), std::string::npos);
  EXPECT_NE(split.out.find("Algorithm 10"), std::string::npos);
  const Result f32 = bfly_gen("show --K 262144");
  ASSERT_EQ(f32.status, 0) << f32.err;
  EXPECT_NE(f32.out.find("bfly_sample_split_f32_w32_k262144_r0_addsub("), std::string::npos);
}

// The paper's LDA baselines: by flags or by name, the same text as the generator's golden file, inspectable.
TEST_F(BflyGen, ShowAndInspectTheLdaBaselines) {
  const Result by_flags = bfly_gen("show --baseline alg4 --K 71 --type f64");
  ASSERT_EQ(by_flags.status, 0) << by_flags.err;
  EXPECT_EQ(by_flags.out, read_file(fs::path(BFLY_GOLDEN_DIR) / "bfly_lda_alg4_f64_k71.cu"));
  const Result by_name = bfly_gen("show bfly_lda_alg4_f64_k71");
  ASSERT_EQ(by_name.status, 0) << by_name.err;
  EXPECT_EQ(by_name.out, by_flags.out);
  const Result alg1 = bfly_gen("show --baseline alg1 --K 100 --inline");
  ASSERT_EQ(alg1.status, 0) << alg1.err;
  EXPECT_NE(alg1.out.find("bfly_lda_alg1_f32_k100("), std::string::npos) << "f32 by default";
  EXPECT_EQ(alg1.out.find("#include \"bfly/"), std::string::npos) << "--inline pastes the fragments";
  const Result inspect = bfly_gen("inspect --baseline alg4 --K 100 --arch sm_90");
  ASSERT_EQ(inspect.status, 0) << inspect.err;
  for (const char* field : {"bfly_lda_alg4_f32_k100", "baseline=alg4 K=100 type=f32", "registers", "spills"})
    EXPECT_NE(inspect.out.find(field), std::string::npos) << field << "\n" << inspect.out;
}

// ---------------------------------------------------------------------------------------------------------
// bfly-gen inspect / cache (NVRTC only: no GPU needed with --arch)
// ---------------------------------------------------------------------------------------------------------
TEST_F(BflyGen, InspectCompilesThroughTheCacheAndCacheListsAndClears) {
  const Result cold = bfly_gen("inspect --K 64 --arch sm_90");
  ASSERT_EQ(cold.status, 0) << cold.err;
  for (const char* field : {"bfly_sample_f32_w16_k64_r8_addsub", "registers", "spills", "local memory",
                            "shared memory", "cache entry", "miss, compiled now"})
    EXPECT_NE(cold.out.find(field), std::string::npos) << field << "\n" << cold.out;
  const Result warm = bfly_gen("inspect bfly_sample_f32_w16_k64_r8_addsub --arch sm_90");
  ASSERT_EQ(warm.status, 0) << warm.err;
  EXPECT_NE(warm.out.find("disk hit"), std::string::npos) << warm.out;

  const Result list = bfly_gen("cache list");
  ASSERT_EQ(list.status, 0) << list.err;
  EXPECT_NE(list.out.find("1 entries"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("bfly_sample_f32_w16_k64_r8_addsub_sm90"), std::string::npos) << list.out;
  const Result clear = bfly_gen("cache clear");
  ASSERT_EQ(clear.status, 0) << clear.err;
  EXPECT_NE(clear.out.find("removed 1 entries"), std::string::npos) << clear.out;
  EXPECT_NE(bfly_gen("cache list").out.find("0 entries"), std::string::npos);
}

TEST_F(BflyGen, InspectWithoutArchNeedsAGpu) {
  const Result r = bfly_gen("inspect --K 64");
  if (r.status == 0) {  // a GPU is there: the architecture came from it
    EXPECT_NE(r.out.find("registers"), std::string::npos) << r.out;
    return;
  }
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("--arch"), std::string::npos) << r.err;
}

// ---------------------------------------------------------------------------------------------------------
// bfly-gen demo (short run on the CPU)
// ---------------------------------------------------------------------------------------------------------
TEST_F(BflyGen, DemoRunsTheGeneratedSourceOnTheCpu) {
  const Result r = bfly_gen("demo --cpu --draws 1000");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("running the generated source on the CPU"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[7/7] invalid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1000 of 1000 draws are -1 and 1000 invalid rows were reported"), std::string::npos) << r.out;
  const std::vector<std::string> one_hot = {"777", "1", "1.00000", "1.00000"};  // category, weight, expected, observed
  bool found = false;
  for (const std::string& line : lines_of(r.out)) found = found || words_of(line) == one_hot;
  EXPECT_TRUE(found) << "the one-hot row must always draw category 777\n" << r.out;
  EXPECT_NE(r.out.find("Every check held"), std::string::npos) << r.out;
}

TEST_F(BflyGen, DemoIsReproducible) {
  const Result a = bfly_gen("demo --cpu --draws 500 --seed 7");
  const Result b = bfly_gen("demo --cpu --draws 500 --seed 7");
  ASSERT_EQ(a.status, 0) << a.err;
  const auto without_timing = [](const std::string& text) { return text.substr(0, text.rfind("draws in")); };
  EXPECT_EQ(without_timing(a.out), without_timing(b.out));
}

// ---------------------------------------------------------------------------------------------------------
// Help and command-line errors
// ---------------------------------------------------------------------------------------------------------
const std::vector<std::string> kCommands = {"generate", "show", "table", "inspect", "cache", "demo"};

TEST_F(BflyGen, HelpForTheToolAndEachCommand) {
  const Result tool = bfly_gen("--help");
  ASSERT_EQ(tool.status, 0) << tool.err;
  for (const std::string& command : kCommands) {
    SCOPED_TRACE(command);
    EXPECT_NE(tool.out.find("  " + command + " "), std::string::npos) << tool.out;
    const Result help = bfly_gen(command + " --help");
    ASSERT_EQ(help.status, 0) << help.err;
    EXPECT_EQ(help.out.rfind("usage: bfly-gen " + command + " ", 0), 0u) << help.out;
    EXPECT_NE(help.out.find("--help"), std::string::npos) << help.out;
    EXPECT_EQ(bfly_gen("help " + command).out, help.out);
    EXPECT_EQ(bfly_gen(command + " -h").out, help.out);
  }
  EXPECT_NE(bfly_gen("generate --help").out.find("--variant V"), std::string::npos);
  EXPECT_NE(bfly_gen("table --help").out.find("--W N"), std::string::npos);
}

TEST_F(BflyGen, VersionPrintsTheProjectVersion) {
  const Result r = bfly_gen("--version");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "bfly-gen " BFLY_VERSION "\n");
  EXPECT_NE(bfly_gen("--help").out.find("--version"), std::string::npos);
}

TEST_F(BflyGen, NoArgumentsPrintsUsageAndFails) {
  const Result r = bfly_gen("");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("usage: bfly-gen"), std::string::npos) << r.err;
}

struct BadCommandLine {
  std::string arguments;
  std::string named;  // what the message must name (the flag, the value or the allowed values)
};

void PrintTo(const BadCommandLine& c, std::ostream* os) { *os << "bfly-gen " << c.arguments; }

class BflyGenBadCommandLine : public BflyGen, public ::testing::WithParamInterface<BadCommandLine> {};

TEST_P(BflyGenBadCommandLine, ExitsWithStatus2AndNamesTheProblem) {
  const Result r = bfly_gen(GetParam().arguments);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("error:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(GetParam().named), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BflyGenBadCommandLine,
    ::testing::Values(BadCommandLine{"frobnicate", "unknown command 'frobnicate'"},
                      BadCommandLine{"table --W 12", "--W 12: W = 12 is not allowed"},
                      BadCommandLine{"table --W", "--W needs a value"},
                      BadCommandLine{"table --variant fancy", "allowed: swap, addsub"},
                      BadCommandLine{"table --frob 3", "unknown flag '--frob'"},
                      BadCommandLine{"table --W 16 --W 8", "--W is given more than once"},
                      BadCommandLine{"table 16", "unexpected argument '16'"},
                      BadCommandLine{"generate", "--K is required"},
                      BadCommandLine{"generate --K 0", "--K 0: K = 0 is not allowed"},
                      BadCommandLine{"generate --K 1k", "--K expects an integer, got '1k'"},
                      BadCommandLine{"generate --K 64 --W 64", "--W 64"},
                      BadCommandLine{"generate --K 64 --remnant 40", "--remnant 40: R = 40 is not allowed"},
                      BadCommandLine{"generate --K 64 --type f8", "allowed: f32, f64, f16, bf16"},
                      BadCommandLine{"generate --K 64 --operation fancy", "--operation fancy"},
                      BadCommandLine{"generate --K 64 -o", "--output needs a value"},
                      BadCommandLine{"generate --K 64 --inline", "unknown flag '--inline'"},
                      BadCommandLine{"show bfly_sample_f32_w32_k1024_r8_addsub --K 5", "not both"},
                      BadCommandLine{"show bfly_sample_f32_w33_k1024_r8_addsub", "W = 33 is not allowed"},
                      BadCommandLine{"show not_a_kernel", "'not_a_kernel' is not a bfly kernel name"},
                      BadCommandLine{"inspect --K 64 --arch sm_12", "--arch sm_12"},
                      BadCommandLine{"show --baseline alg2 --K 64", "--baseline alg2"},
                      BadCommandLine{"show --baseline alg4", "--K is required"},
                      BadCommandLine{"show --baseline alg4 --K 64 --W 16", "--W does not apply to an LDA baseline"},
                      BadCommandLine{"show bfly_lda_alg4_f32_k64 --K 64", "not both"},
                      BadCommandLine{"show bfly_lda_alg4_f32_k064", "not an LDA baseline kernel name"},
                      BadCommandLine{"generate --baseline alg4 --K 64", "unknown flag '--baseline'"},
                      BadCommandLine{"cache", "list or clear"},
                      BadCommandLine{"cache prune", "unknown cache action 'prune'"},
                      BadCommandLine{"demo --draws 0", "--draws 0"},
                      BadCommandLine{"demo --seed -1", "--seed expects"},
                      BadCommandLine{"help frobnicate", "unknown command 'frobnicate'"}),
    [](const ::testing::TestParamInfo<BadCommandLine>& info) { return "case" + std::to_string(info.index); });

TEST_F(BflyGen, RuntimeFailureExitsWithStatus1) {
  const Result r = bfly_gen("generate --K 64 -o " + quote((scratch_ / "no" / "such" / "dir" / "k.cuh").string()));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
}

}  // namespace
