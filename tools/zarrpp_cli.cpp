// zarrpp: the command-line tool. Errors are one line on stderr ("zarrpp: error: ...") with a
// non-zero exit code; success is quiet unless output was asked for.
// Each subcommand is in tools/cli/<name>.cpp; what they share, in tools/cli/common.cpp.
#include <csignal>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>

#include <zarrpp/zarrpp.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/output.hpp"
#include "cli/progress.hpp"

using namespace zarrpp;

namespace {

// SIGINT, SIGTERM, SIGHUP: an interrupted `get --out` or `show` leaves no partial file (chunk temporaries
// in a store are swept by the next writer there), then the signal ends the process as usual.
extern "C" void on_termination_signal(int sig) {
  zarrpp::remove_unfinished_file_temporaries();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Signals the caller ignores (nohup, background jobs) stay ignored.
void install_termination_handlers() {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old{};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) ::signal(sig, on_termination_signal);
  }
}

}  // namespace

// When no subcommand was recognised: "unknown subcommand 'foo'" for the first word that is not an
// option (nor an option's value), rather than CLI11's "A subcommand is required".
std::optional<std::string> unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  if (!app.get_subcommands().empty()) return std::nullopt;  // one was recognised: its error stands
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.starts_with("-")) {
      const auto* opt = app.get_option_no_throw(a.substr(0, a.find('=')));
      if (opt && opt->get_type_size() != 0 && a.find('=') == std::string::npos) ++i;  // skip its value
      continue;
    }
    std::string names;
    for (const auto* s : app.get_subcommands([](const CLI::App*) { return true; }))
      names += (names.empty() ? "" : ", ") + s->get_name();
    return "unknown subcommand '" + a + "' (the subcommands are " + names + ")";
  }
  return std::nullopt;
}

namespace {

// A command line CLI11 refused. --help and --version (exit code 0) print as CLI11 does; an error
// is one line on stderr, exit code 2.
int parse_failure(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (e.get_exit_code() == 0) return app.exit(e);
  // Only where CLI11 found no subcommand (its "A subcommand is required", or extra words) does
  // the first unknown word say more; other errors (a missing value, a bad number) stand.
  const bool no_subcommand = dynamic_cast<const CLI::RequiredError*>(&e) || dynamic_cast<const CLI::ExtrasError*>(&e);
  const auto unknown = no_subcommand ? unknown_subcommand(app, argc, argv) : std::nullopt;
  std::cerr << "zarrpp: error: " << cli::one_line(unknown.value_or(e.what())) << " (see zarrpp --help)\n";
  return 2;
}

// Runs the subcommand the command line gave; its exit code (an error: one line on stderr, 1).
int run_given(std::span<const std::unique_ptr<cli::Command>> commands) {
  try {
    for (const auto& c : commands) {
      if (c->given()) {
        try {
          c->run();
        } catch (...) {
          // What a failed command changed in a zip file is written too, as it would stand in a
          // directory; the command's own error is the one reported.
          try {
            cli::close_zip_stores(true);
          } catch (const std::exception& e) {
            std::cerr << "zarrpp: error: " << cli::one_line(e.what()) << "\n";
          }
          throw;
        }
        cli::close_zip_stores(false);
        break;
      }
    }
  } catch (const std::bad_alloc&) {
    std::cerr << "zarrpp: error: out of memory (the data asked for does not fit; select less, or use smaller chunks)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "zarrpp: error: " << cli::one_line(e.what()) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  install_termination_handlers();
  cli::check_standard_output();
  CLI::App app{
      "zarrpp: Zarr arrays (v3, and v2) that grow at both ends.\nARRAY and STORE are a node's local directory (holding "
      "zarr.json, or .zarray/.zgroup) or a URL: s3://bucket/path, az://container/path (Azure: "
      "AZURE_STORAGE_CONNECTION_STRING), "
      "http(s)://host/path, file:///path."};
  app.require_subcommand(1);
  // The app's own options (--progress, --timeout, ...) may also follow the subcommand.
  app.fallthrough();
  app.set_version_flag("--version", std::string("zarrpp ") + kVersion);
  cli::add_network_options(app);
  cli::add_progress_options(app);
  // The subcommands, in the order --help lists them.
  const std::unique_ptr<cli::Command> commands[] = {
      cli::make_create(), cli::make_info(),    cli::make_show(),    cli::make_tree(),   cli::make_ls(),
      cli::make_get(),    cli::make_set(),     cli::make_prepend(), cli::make_append(), cli::make_resize(),
      cli::make_copy(),   cli::make_convert(), cli::make_demo()};
  for (const auto& c : commands) c->add(app);

  // Warnings (e.g. consolidated metadata that could not be refreshed): one line each on stderr.
  set_warning_handler(
      [](const std::string& message) { std::cerr << "zarrpp: warning: " << cli::one_line(message) << std::endl; });

  int rc = 0;
  try {
    app.parse(argc, argv);
    rc = run_given(commands);
  } catch (const CLI::ParseError& e) {
    rc = parse_failure(app, e, argc, argv);
  }
  // What went to standard output must have arrived (a full disk, /dev/full, a closed pipe's file).
  if (const std::string failed = cli::finish_standard_output(); !failed.empty()) {
    std::cerr << "zarrpp: error: " << failed
              << (rc == 0 ? "; the command itself completed (what it changed, it changed)" : "") << "\n";
    rc = rc == 0 ? 1 : rc;
  }
  return rc;
}
