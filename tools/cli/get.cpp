// zarrpp get: read a selection and print it, or save it as .npy.
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "npy_slabs.hpp"
#include "output.hpp"
#include "print.hpp"
#include "progress.hpp"

namespace zarrpp::cli {

namespace {

class GetCommand final : public Command {
 public:
  void add(CLI::App& app) override;
  void run() override;

 private:
  std::string array_, sel_, out_;
  bool coords_ = false, oindex_ = false;
};

void GetCommand::add(CLI::App& app) {
  sub_ = app.add_subcommand("get", "Read a selection (NumPy syntax) and print it or save it as .npy");
  sub_->add_option("ARRAY", array_, "The array: its directory or URL")->required();
  sub_->add_option("SELECTION", sel_, "e.g. \"0:3, ::2\", \"-1\", \"...\", \"[0,2,5], :\"");
  sub_->add_option("--out", out_, "Write a .npy file instead of printing (- for standard output)");
  add_selection_flags(*sub_, coords_, oindex_);
}

void GetCommand::run() {
  Array z = open_array_at(array_, Use::read);
  if (!out_.empty()) check_output(out_, "--out", z);
  const auto plan = plan_selection(parse_selection(sel_), z, oindex_, coords_);
  if (z.dtype().is_vlen()) {
    if (!out_.empty())
      throw ArgumentError("get --out: a .npy file cannot hold the variable-length " + z.dtype().name() +
                          " elements of this array; print them instead (no --out)");
    const ArrayMetadata m = z.metadata();
    print_vlen(std::cout, std::get<VlenValues>(z.read(plan)), z.dtype() == DataType::bytes_t, m.missing_element());
    return;
  }
  if (out_.empty()) {
    print_array(std::cout, std::get<NDArray>(z.read(plan)));
    return;
  }
  // --out: the progress line, told by every stored object read.
  ProgressLine line("get", selection_bytes(z, plan));
  z.set_progress(line.callback());
  if (plan.kind == IndexPlan::Kind::orthogonal)
    save_selection(z, plan.selection, coords_, out_);  // in slabs, for selections of any size
  else
    npy::save(out_, std::get<NDArray>(z.read(plan)));
}

}  // namespace

std::unique_ptr<Command> make_get() { return std::make_unique<GetCommand>(); }

}  // namespace zarrpp::cli
