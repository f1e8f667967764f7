// zarrpp set: write a value, or a .npy file, into a selection.
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "npy_slabs.hpp"

namespace zarrpp::cli {

namespace {

class SetCommand final : public Command {
 public:
  void add(CLI::App& app) override;
  void run() override;

 private:
  std::string array_, sel_, value_, from_;
  bool coords_ = false, oindex_ = false;
  void write_planned(Array& z, const IndexPlan& plan) const;
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

// A value (or .npy of one value per point) written at points paired up from index arrays.
void SetCommand::write_planned(Array& z, const IndexPlan& plan) const {
  if (z.dtype().is_vlen()) {
    if (!from_.empty()) throw ArgumentError("set --from: a .npy file cannot hold variable-length elements");
    write_vlen_index(z, plan, VlenValues{{}, {value_}});  // one value, broadcast over the points
    return;
  }
  if (value_.empty() && from_.empty()) throw ArgumentError("set: give --value V or --from FILE.npy");
  const NDArray data = from_.empty() ? scalar_array(value_, z.dtype(), "--value") : npy::load(from_);
  write_index(z, plan, data.view());
}

void SetCommand::run() {
  auto z = open_array_at(array_);
  const auto plan = plan_selection(parse_selection(sel_), z, oindex_, coords_);
  if (plan.kind != IndexPlan::Kind::orthogonal) {
    write_planned(z, plan);
    return;
  }
  const Selection& sel = plan.selection;
  if (z.dtype().is_vlen()) {
    if (!from_.empty())
      throw ArgumentError("set --from: a .npy file cannot hold variable-length " + z.dtype().name() +
                          " elements; use --value TEXT");
    if (coords_)
      z.coords().write_vlen(sel, VlenValues{{}, {value_}});
    else
      z.write_vlen(sel, VlenValues{{}, {value_}});
  } else if (!value_.empty() || !from_.empty()) {
    if (!from_.empty()) {
      set_from_npy(z, sel, coords_, from_);
    } else {
      const NDArray data = scalar_array(value_, z.dtype(), "--value");
      if (coords_)
        z.coords().write(sel, data);
      else
        z.write(sel, data);
    }
  } else
    throw ArgumentError("set: give --value V or --from FILE.npy");
}

}  // namespace

std::unique_ptr<Command> make_set() { return std::make_unique<SetCommand>(); }

}  // namespace zarrpp::cli
