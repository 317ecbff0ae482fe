// bfly::Error: the one exception type of bfly; every error says what was wrong and what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace bfly {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace bfly
