// zarrpp ls: the stored chunk keys of an array, in grid order.
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"

namespace zarrpp::cli {

namespace {

class LsCommand final : public Command {
 public:
  void add(CLI::App& app) override {
    sub_ = app.add_subcommand("ls", "List stored chunk keys in grid order");
    sub_->add_option("ARRAY", array_, "The array: its directory or URL")->required();
  }

  void run() override {
    auto z = open_array_at(array_, Use::read);
    for (const auto& k : z.stored_chunk_keys()) std::cout << k << "\n";
  }

 private:
  std::string array_;
};

}  // namespace

std::unique_ptr<Command> make_ls() { return std::make_unique<LsCommand>(); }

}  // namespace zarrpp::cli
