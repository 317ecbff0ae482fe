// The command-line parser of the tools (bfly-gen, bfly-lda): each command (a bfly-gen subcommand, or a tool without
// subcommands such as bfly-lda) declares its flags in one table, which both parses the arguments and writes the
// command's --help. Mistakes raise UsageError (exit status 2).
#pragma once

#include "bfly/error.hpp"

#include <initializer_list>
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

// The arguments of one command after parsing: flags by their long name, then positional arguments.
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
  // Its value as an integer in [minimum, maximum]; otherwise UsageError "--K expects an integer in [1, 9], got 'x'".
  std::optional<long long> integer_in(std::string_view flag, long long minimum, long long maximum) const;
  // Its value as a finite number above 0; otherwise UsageError "--alpha expects a positive number, got 'x'".
  std::optional<double> positive(std::string_view flag) const;
  // Its value, one of `allowed`; otherwise UsageError "--type expects f32 or f64, got 'x'".
  std::optional<std::string> choice(std::string_view flag, std::initializer_list<std::string_view> allowed) const;
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

// The --help of a tool without subcommands: "usage: <synopsis>", the description, the flag table, then `epilogue`
// (e.g. the exit statuses) when not empty.
std::string format_usage(std::string_view synopsis, std::string_view description, const std::vector<Flag>& flags,
                         std::string_view epilogue = {});

}  // namespace bfly::cli
