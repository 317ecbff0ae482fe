// bfly-lda infer and bfly-lda evaluate: their flags and parsing (the work is bfly/lda/commands.hpp's).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bfly::lda::cli_commands {

// True for the words that name a model subcommand ("infer", "evaluate").
bool is_model_command(std::string_view word);

// Runs `bfly-lda <command> <arguments>`; returns the exit status (0) or throws as main's other paths do
// (cli::UsageError, RunError, CorpusError, CheckpointError: status 2; others: 1).
int run_model_command(std::string_view command, const std::vector<std::string>& arguments);

}  // namespace bfly::lda::cli_commands
