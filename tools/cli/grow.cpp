// zarrpp prepend and append: add the data of a .npy file before index 0, or after the end, along an axis.
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "common.hpp"

namespace zarrpp::cli {

namespace {

class GrowCommand final : public Command {
 public:
  explicit GrowCommand(bool front) : front_(front) {}
  void add(CLI::App& app) override;
  void run() override;

 private:
  bool front_;  // prepend (else append)
  std::string array_, from_, axis_;
};

void GrowCommand::add(CLI::App& app) {
  sub_ = front_ ? app.add_subcommand("prepend", "Add data before index 0 along an axis")
                : app.add_subcommand("append", "Add data after the end along an axis");
  sub_->add_option("ARRAY", array_, "The array: its directory or URL")->required();
  sub_->add_option("--axis", axis_, "Axis to grow (negative counts from the end)")->required()->allow_extra_args(false);
  sub_->add_option("--from", from_, "A .npy file")->required();
}

void GrowCommand::run() {
  auto z = open_array_at(array_);
  const std::size_t axis = parse_axis(axis_, z.ndim());
  if (z.dtype().is_vlen())
    throw ArgumentError(std::string(front_ ? "prepend" : "append") + ": a .npy file cannot hold the variable-length " +
                        z.dtype().name() + " elements of this array (grow it from C++ or Python)");
  const auto data = npy::load_view(from_, z.concurrency());
  if (front_)
    z.prepend(data.view, axis);
  else
    z.append(data.view, axis);
}

}  // namespace

std::unique_ptr<Command> make_prepend() { return std::make_unique<GrowCommand>(true); }
std::unique_ptr<Command> make_append() { return std::make_unique<GrowCommand>(false); }

}  // namespace zarrpp::cli
