// The command-line parser of bfly-gen: each subcommand declares its flags in one table, which both parses the
// arguments and writes the subcommand's --help. Mistakes raise UsageError (exit status 2).
#pragma once

#include "bfly/error.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bfly::cli {

// A mistake in the command line: unknown flag, missing or bad value. main() prints it and exits with status 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

struct Flag {
  std::string_view name;        // "--K"
  std::string_view value_name;  // "N" for a flag with a value; empty for a switch such as --inline
  std::string_view help;        // one line, with the default and the allowed values
  std::string_view alias = {};  // a short form, e.g. "-o"
};

// The arguments of one subcommand after parsing: flags by their long name, then positional arguments.
class Args {
 public:
  // Parses `argv` (the words after the subcommand) against `flags`. Accepts `--flag value` and `--flag=value`.
  // Throws UsageError for an unknown flag, a missing value, a repeated flag, or more positionals than allowed.
  Args(std::string_view command, const std::vector<Flag>& flags, const std::vector<std::string>& argv,
       std::size_t max_positionals);

  bool help() const { return help_; }                                  // --help or -h was given
  bool has(std::string_view flag) const;                               // flag given (switch or value)
  std::optional<std::string> value(std::string_view flag) const;       // its value, if given
  std::optional<int> integer(std::string_view flag) const;             // its value as an int, checked
  const std::vector<std::string>& positionals() const { return positionals_; }
  const std::string& command() const { return command_; }

 private:
  std::string command_;
  bool help_ = false;
  std::map<std::string, std::string, std::less<>> values_;  // a switch maps to ""
  std::vector<std::string> positionals_;
};

// The flag table as --help prints it: one line per flag, names aligned.
std::string format_flags(const std::vector<Flag>& flags);

}  // namespace bfly::cli
