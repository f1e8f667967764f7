#pragma once
// The subcommands of zarrpp, one file each (tools/cli/<name>.cpp). main adds them to the app in
// the order --help lists them, parses, and runs the one given.
#include <CLI/CLI.hpp>
#include <memory>

namespace zarrpp::cli {

class Command {
 public:
  Command() = default;
  Command(const Command&) = delete;  // CLI11 holds references to the option values
  Command& operator=(const Command&) = delete;
  virtual ~Command() = default;

  // Adds the subcommand, its options and their help to `app`.
  virtual void add(CLI::App& app) = 0;
  // Does what the command line asked; failures are exceptions (main prints them).
  virtual void run() = 0;
  // Whether the command line named this subcommand.
  bool given() const { return sub_ != nullptr && sub_->parsed(); }

 protected:
  CLI::App* sub_ = nullptr;  // set by add
};

std::unique_ptr<Command> make_create();
std::unique_ptr<Command> make_info();
std::unique_ptr<Command> make_show();
std::unique_ptr<Command> make_tree();
std::unique_ptr<Command> make_ls();
std::unique_ptr<Command> make_get();
std::unique_ptr<Command> make_set();
std::unique_ptr<Command> make_prepend();
std::unique_ptr<Command> make_append();
std::unique_ptr<Command> make_resize();
std::unique_ptr<Command> make_copy();
std::unique_ptr<Command> make_convert();
std::unique_ptr<Command> make_demo();

}  // namespace zarrpp::cli
