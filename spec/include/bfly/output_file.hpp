// How bfly writes files: every write checked, errors that name the file and the real cause ("disk full" for
// ENOSPC), outputs that are only ever regular files, published atomically (temporary in the same directory, fsync,
// rename), so a reader sees the old file, the complete new one, or none; never a partial one.
#pragma once

#include <cstddef>
#include <string>

namespace bfly {

// The cause of a failed system call in words: ENOSPC "disk full", EDQUOT "disk quota exceeded", EACCES/EPERM
// "permission denied", EROFS "read-only file system", otherwise strerror's text.
std::string describe_errno(int error);

// Writes all `bytes` to `fd` (retrying short writes and EINTR); throws bfly::Error "NAME: cannot write: CAUSE".
void write_all(int fd, const void* data, std::size_t bytes, const std::string& name);

// Throws bfly::Error unless `path` is a regular file (a symbolic link to one counts) or does not exist yet: device
// nodes, FIFOs, sockets, directories and links to them are refused. `what` names the output in the message.
void check_output_path(const std::string& path, const std::string& what = "output");

// Removes `temporary_prefix`* files left in `dir` by processes that no longer run (a killed run's temporaries,
// named PREFIX.PID.N by OutputFile). Errors are ignored.
void remove_stale_temporaries(const std::string& dir);

// Creates DIR/STEM SUFFIX empty and returns its path, or, where a file of that name is already there, DIR/STEM-2
// SUFFIX, -3 and so on: the first name no file holds, created with O_EXCL so that two processes never take the same
// one. For results named by device and date (bfly-bench, lda-bench), so that a second run of the day keeps the first
// one's file; write the new one through OutputFile(path). Creates DIR if needed. Throws bfly::Error naming the file
// and the cause ("permission denied", "disk full") when it cannot create one.
std::string create_unused_file(const std::string& dir, const std::string& stem, const std::string& suffix);

// A file written to a temporary (".NAME.tmp.PID.N" next to it) and renamed over `path` by commit(); destroyed
// without commit(), the temporary is removed and `path` is untouched. A symbolic link to a regular file is replaced
// through its target.
class OutputFile {
 public:
  explicit OutputFile(std::string path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  void write(const void* data, std::size_t bytes);
  void text(const std::string& s) { write(s.data(), s.size()); }
  // Flushes the temporary to disk and closes it (errors thrown); commit() then only renames.
  void finish();
  // finish() if not done, then renames the temporary over the path.
  void commit();
  const std::string& path() const { return path_; }

 private:
  void flush_buffer();
  std::string path_, target_, temp_;
  int fd_ = -1;
  bool finished_ = false, committed_ = false;
  std::string buffer_;
};

}  // namespace bfly
