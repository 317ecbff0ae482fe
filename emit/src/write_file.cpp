// write_if_different: see write_file.hpp.
#include "bfly/emit/write_file.hpp"

#include "bfly/error.hpp"
#include "bfly/output_file.hpp"

#include <fstream>
#include <sstream>

namespace bfly::gen {

bool write_if_different(const std::string& path, const std::string& content) {
  check_output_path(path);  // before reading it: a FIFO would block, a device would never end
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream old;
      old << in.rdbuf();
      if (old.str() == content) return false;
    }
  }
  OutputFile out(path);
  out.text(content);
  out.commit();
  return true;
}

}  // namespace bfly::gen
