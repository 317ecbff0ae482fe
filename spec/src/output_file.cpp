// bfly/output_file.hpp: checked, atomic file output.
#include "bfly/output_file.hpp"

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bfly {

std::string describe_errno(int error) {
  switch (error) {
    case ENOSPC: return "disk full (no space left on device)";
#ifdef EDQUOT
    case EDQUOT: return "disk quota exceeded";
#endif
    case EACCES:
    case EPERM: return "permission denied";
    case EROFS: return "read-only file system";
    case EISDIR: return "is a directory";
    case ENOENT: return "no such file or directory";
    default: return std::strerror(error);
  }
}

void write_all(int fd, const void* data, std::size_t bytes, const std::string& name) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd, p, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("{}: cannot write: {}", name, describe_errno(errno)));
    }
    if (n == 0) throw Error(fmt::format("{}: cannot write: the write made no progress", name));
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

void check_output_path(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;  // a new file
    throw Error(fmt::format("{}: cannot use it as the {}: {}", path, what, describe_errno(errno)));
  }
  if (!S_ISREG(st.st_mode))
    throw Error(fmt::format("{}: is {}; the {} must be a regular file (or '-' for standard output where allowed)",
                            path, kind_of(st.st_mode), what));
}

void remove_stale_temporaries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    // .NAME.tmp.PID.N
    if (name.size() < 2 || name[0] != '.') continue;
    const std::size_t tmp = name.rfind(".tmp.");
    if (tmp == std::string::npos) continue;
    const std::string rest = name.substr(tmp + 5);
    const std::size_t dot = rest.find('.');
    if (dot == std::string::npos) continue;
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (end != rest.c_str() + dot || pid <= 0) continue;
    if (pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still running (or not ours)
    ::unlink((std::filesystem::path(dir) / name).c_str());
  }
  ::closedir(d);
}

std::string create_unused_file(const std::string& dir, const std::string& stem, const std::string& suffix) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("{}: cannot create the directory: {}", dir, describe_errno(ec.value())));
  constexpr int kMostRuns = 10000;
  for (int run = 1; run <= kMostRuns; ++run) {
    const std::string name = run == 1 ? stem + suffix : fmt::format("{}-{}{}", stem, run, suffix);
    const std::string path = (std::filesystem::path(dir) / name).string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return path;
    }
    if (errno != EEXIST) throw Error(fmt::format("{}: cannot create: {}", path, describe_errno(errno)));
  }
  throw Error(fmt::format("{}/{}{}: {} files of that name are there already", dir, stem, suffix, kMostRuns));
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)), target_(path_) {
  check_output_path(path_);
  std::error_code ec;
  if (std::filesystem::is_symlink(path_, ec)) target_ = std::filesystem::canonical(path_, ec).string();
  if (ec || target_.empty()) target_ = path_;
  const std::filesystem::path target(target_);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  static std::atomic<unsigned> counter{0};
  temp_ = (dir / fmt::format(".{}.tmp.{}.{}", target.filename().string(), ::getpid(), counter++)).string();
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0)
    throw Error(fmt::format("{}: cannot write (creating {}): {}", path_, temp_, describe_errno(errno)));
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void OutputFile::flush_buffer() {
  if (buffer_.empty()) return;
  write_all(fd_, buffer_.data(), buffer_.size(), path_);
  buffer_.clear();
}

void OutputFile::write(const void* data, std::size_t bytes) {
  if (fd_ < 0) throw Error(fmt::format("{}: written after it was finished", path_));
  constexpr std::size_t kBuffer = 1 << 16;
  if (bytes >= kBuffer) {
    flush_buffer();
    write_all(fd_, data, bytes, path_);
    return;
  }
  buffer_.append(static_cast<const char*>(data), bytes);
  if (buffer_.size() >= kBuffer) flush_buffer();
}

void OutputFile::finish() {
  if (finished_) return;
  flush_buffer();
  if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS)
    throw Error(fmt::format("{}: cannot flush to disk: {}", path_, describe_errno(errno)));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw Error(fmt::format("{}: cannot write: {}", path_, describe_errno(errno)));
  finished_ = true;
}

void OutputFile::commit() {
  finish();
  check_output_path(path_);  // it may have become a directory meanwhile
  if (::rename(temp_.c_str(), target_.c_str()) != 0)
    throw Error(fmt::format("{}: cannot replace it with {}: {}", path_, temp_, describe_errno(errno)));
  committed_ = true;
}

}  // namespace bfly
