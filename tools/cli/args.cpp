// The command-line parser of the tools (see args.hpp).
#include "cli/args.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace bfly::cli {
namespace {

std::string flag_names(const std::vector<Flag>& flags) {
  std::string names;
  for (const Flag& flag : flags) names += fmt::format("{}, ", flag.name);
  return names + "--help";
}

const Flag* find_flag(const std::vector<Flag>& flags, std::string_view word) {
  for (const Flag& flag : flags)
    if (flag.name == word || (!flag.alias.empty() && flag.alias == word)) return &flag;
  return nullptr;
}

// "-o" and "--K" are flags; "-" (standard output) and "-5" (a value) are not.
bool looks_like_flag(std::string_view word) {
  return word.size() >= 2 && word[0] == '-' && !(word[1] >= '0' && word[1] <= '9');
}

}  // namespace

Args::Args(std::string_view command, const std::vector<Flag>& flags, const std::vector<std::string>& argv,
           std::size_t max_positionals)
    : command_(command) {
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (word == "--help" || word == "-h") {
      help_ = true;
      continue;
    }
    if (!looks_like_flag(word)) {
      if (positionals_.size() == max_positionals) {
        throw UsageError(max_positionals == 0
                             ? fmt::format("unexpected argument '{}' (this command takes only flags)", word)
                             : fmt::format("unexpected argument '{}' (at most {} allowed)", word, max_positionals));
      }
      positionals_.push_back(word);
      continue;
    }
    const std::size_t equals = word.find('=');
    const std::string_view written = std::string_view(word).substr(0, equals);
    const Flag* flag = find_flag(flags, written);
    if (flag == nullptr)
      throw UsageError(
          fmt::format("unknown flag '{}'; the flags of '{}' are: {}", written, command, flag_names(flags)));
    const std::string name(flag->name);
    if (values_.contains(name)) throw UsageError(fmt::format("{} is given more than once", name));
    if (flag->value_name.empty()) {
      if (equals != std::string::npos) throw UsageError(fmt::format("{} takes no value", name));
      values_[name] = "";
      continue;
    }
    if (equals != std::string::npos) {
      values_[name] = word.substr(equals + 1);
    } else if (i + 1 < argv.size() && !looks_like_flag(argv[i + 1])) {
      values_[name] = argv[++i];
    } else {
      throw UsageError(fmt::format("{} needs a value: {} {}  ({})", name, name, flag->value_name, flag->help));
    }
    if (values_[name].empty()) throw UsageError(fmt::format("{} needs a non-empty value ({})", name, flag->help));
  }
}

bool Args::has(std::string_view flag) const { return values_.contains(flag); }

std::optional<std::string> Args::value(std::string_view flag) const {
  const auto it = values_.find(flag);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::optional<int> Args::integer(std::string_view flag) const {
  const std::optional<std::string> text = value(flag);
  if (!text) return std::nullopt;
  int number = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), number);
  if (error != std::errc() || end != text->data() + text->size())
    throw UsageError(fmt::format("{} expects an integer, got '{}'", flag, *text));
  return number;
}

std::optional<long long> Args::integer_in(std::string_view flag, long long minimum, long long maximum) const {
  const std::optional<std::string> text = value(flag);
  if (!text) return std::nullopt;
  long long number = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), number);
  if (error != std::errc() || end != text->data() + text->size() || number < minimum || number > maximum)
    throw UsageError(fmt::format("{} expects an integer in [{}, {}], got '{}'", flag, minimum, maximum, *text));
  return number;
}

std::optional<double> Args::positive(std::string_view flag) const {
  const std::optional<std::string> text = value(flag);
  if (!text) return std::nullopt;
  double number = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), number);
  if (error != std::errc() || end != text->data() + text->size() || !(number > 0) || !std::isfinite(number))
    throw UsageError(fmt::format("{} expects a positive number, got '{}'", flag, *text));
  return number;
}

std::optional<std::string> Args::choice(std::string_view flag, std::initializer_list<std::string_view> allowed) const {
  const std::optional<std::string> text = value(flag);
  if (!text) return std::nullopt;
  std::string list;
  std::size_t i = 0;
  for (const std::string_view option : allowed) {
    if (option == *text) return text;
    list += fmt::format("{}{}", i == 0 ? "" : (i + 1 == allowed.size() ? " or " : ", "), option);
    ++i;
  }
  throw UsageError(fmt::format("{} expects {}, got '{}'", flag, list, *text));
}

std::string format_usage(std::string_view synopsis, std::string_view description, const std::vector<Flag>& flags,
                         std::string_view epilogue) {
  std::string text = fmt::format("usage: {}\n{}\n\nflags:\n{}", synopsis, description, format_flags(flags));
  if (!epilogue.empty()) text += fmt::format("\n{}", epilogue);
  return text;
}

std::string format_flags(const std::vector<Flag>& flags) {
  std::vector<std::string> left;
  for (const Flag& flag : flags) {
    std::string text = flag.alias.empty() ? std::string(flag.name) : fmt::format("{}, {}", flag.alias, flag.name);
    if (!flag.value_name.empty()) text += fmt::format(" {}", flag.value_name);
    left.push_back(text);
  }
  left.push_back("-h, --help");
  std::size_t width = 0;
  for (const std::string& text : left) width = std::max(width, text.size());
  std::string out;
  for (std::size_t i = 0; i < left.size(); ++i) {
    const std::string_view help = i < flags.size() ? flags[i].help : "print this help and exit";
    out += fmt::format("  {:<{}}  {}\n", left[i], width, help);
  }
  return out;
}

}  // namespace bfly::cli
