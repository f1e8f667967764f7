// zarrpp prepend and append: add the data of a .npy file before index 0, or after the end, along an axis.
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "progress.hpp"

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
  std::int64_t chunk_size_ = 0;
};

void GrowCommand::add(CLI::App& app) {
  sub_ = front_ ? app.add_subcommand("prepend", "Add data before index 0 along an axis")
                : app.add_subcommand("append", "Add data after the end along an axis");
  sub_->add_option("ARRAY", array_, "The array: its directory or URL")->required();
  sub_->add_option("--axis", axis_, "Axis to grow (negative counts from the end)")->required()->allow_extra_args(false);
  sub_->add_option("--from", from_, "A .npy file")->required();
  sub_->add_option("--chunk-size", chunk_size_,
                   "Rectilinear grids: new chunks of this size along the axis, only the one next to the old data "
                   "smaller (default: one chunk of exactly the data's extent)");
}

void GrowCommand::run() {
  if (sub_->count("--chunk-size") && chunk_size_ < 1)
    throw ArgumentError("--chunk-size must be >= 1, got " + std::to_string(chunk_size_));
  auto z = open_array_at(array_, Use::write);
  const std::size_t axis = parse_axis(axis_, z.ndim());
  if (z.dtype().is_vlen())
    throw ArgumentError(std::string(front_ ? "prepend" : "append") + ": a .npy file cannot hold the variable-length " +
                        z.dtype().name() + " elements of this array (grow it from C++ or Python)");
  const auto data = npy::load_view(from_, z.concurrency());
  ProgressLine line(front_ ? "prepend" : "append",
                    static_cast<std::uint64_t>(data.view.size()) * data.view.dtype().size());
  z.set_progress(line.callback());
  if (front_)
    z.prepend(data.view, axis, chunk_size_);
  else
    z.append(data.view, axis, chunk_size_);
}

}  // namespace

std::unique_ptr<Command> make_prepend() { return std::make_unique<GrowCommand>(true); }
std::unique_ptr<Command> make_append() { return std::make_unique<GrowCommand>(false); }

}  // namespace zarrpp::cli
