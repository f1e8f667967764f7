// zarrpp resize: a new shape, or a new domain at either end.
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "progress.hpp"

namespace zarrpp::cli {

namespace {

class ResizeCommand final : public Command {
 public:
  void add(CLI::App& app) override {
    sub_ = app.add_subcommand("resize", "Change the shape, or the domain at either end");
    sub_->add_option("ARRAY", array_, "The array: its directory or URL")->required();
    auto* s = sub_->add_option("--shape", shape_, "New shape, keeping the lower bound");
    auto* d = sub_->add_option("--domain", domain_, "New domain LO:HI per dimension, e.g. -3:6,0:4");
    s->excludes(d);
  }

  void run() override {
    auto z = open_array_at(array_, Use::write);
    // Chunks removed (a shrink) and chunks cleared where the domain grows.
    ProgressLine line("resize", 0);
    z.set_progress(line.callback());
    if (!shape_.empty())
      z.resize(parse_shape(shape_, "--shape"));
    else if (!domain_.empty())
      z.resize_domain(parse_domain(domain_));
    else
      throw ArgumentError("resize: give --shape or --domain");
  }

 private:
  std::string array_, shape_, domain_;
};

}  // namespace

std::unique_ptr<Command> make_resize() { return std::make_unique<ResizeCommand>(); }

}  // namespace zarrpp::cli
