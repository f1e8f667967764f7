// zarrpp set: write a value, or a .npy file, into a selection.
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "npy_slabs.hpp"
#include "progress.hpp"

namespace zarrpp::cli {

namespace {

class SetCommand final : public Command {
 public:
  void add(CLI::App& app) override;
  void run() override;

 private:
  std::string array_, sel_, value_, from_;
  bool coords_ = false, oindex_ = false;
};

void SetCommand::add(CLI::App& app) {
  sub_ = app.add_subcommand("set", "Write a value or a .npy file into a selection");
  sub_->add_option("ARRAY", array_, "The array: its directory or URL")->required();
  sub_->add_option("SELECTION", sel_, "What to write, in NumPy syntax (\"0:3, ::2\"); default: everything");
  auto* v = sub_->add_option("--value", value_, "A scalar, broadcast over the selection");
  auto* f = sub_->add_option("--from", from_, "A .npy file of the selection's shape");
  add_selection_flags(*sub_, coords_, oindex_);
  v->excludes(f);
}

void SetCommand::run() {
  auto z = open_array_at(array_, Use::write);
  const auto plan = plan_selection(parse_selection(sel_), z, oindex_, coords_);
  ProgressLine line("set", selection_bytes(z, plan));
  z.set_progress(line.callback());
  if (z.dtype().is_vlen()) {
    if (!from_.empty())
      throw ArgumentError("set --from: a .npy file cannot hold variable-length " + z.dtype().name() +
                          " elements; use --value TEXT");
    z.write(plan, VlenValues{{}, {value_}});  // one value, broadcast over the selection
    return;
  }
  if (value_.empty() && from_.empty()) throw ArgumentError("set: give --value V or --from FILE.npy");
  if (!from_.empty() && plan.kind == IndexPlan::Kind::orthogonal) {
    set_from_npy(z, plan.selection, coords_, from_);  // in slabs, for selections of any size
    return;
  }
  const NDArray data = from_.empty() ? scalar_array(value_, z.dtype(), "--value") : npy::load(from_);
  z.write(plan, data);
}

}  // namespace

std::unique_ptr<Command> make_set() { return std::make_unique<SetCommand>(); }

}  // namespace zarrpp::cli
