// zarrpp convert: a Zarr v2 node (and everything under it) to Zarr v3, or back with
// --zarr-format 2, in place or into DST; or,
// with --grid, an array's chunk grid switched in place.
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "progress.hpp"

namespace zarrpp::cli {

namespace {

class ConvertCommand final : public Command {
 public:
  void add(CLI::App& app) override;
  void run() override;

 private:
  void switch_grid() const;
  void to_format() const;

  std::string src_, dst_, grid_;
  int format_ = 3;
  bool over_ = false;
};

void ConvertCommand::add(CLI::App& app) {
  sub_ = app.add_subcommand(
      "convert", "Convert a Zarr v2 array or group (with everything under it) to Zarr v3, or back, rewriting no chunk");
  sub_->add_option("SRC", src_, "The node (a local directory or URL)")->required();
  sub_->add_option("DST", dst_,
                   "Write the converted node here (chunks copied byte for byte); default: convert SRC in place");
  sub_->add_option("--zarr-format", format_,
                   "The format to convert to: 3 (default), or 2 (every node must have a v2 form; in place, an "
                   "array's chunk keys must be v2 keys already, as a converted array's are)")
      ->check(CLI::IsMember({2, 3}));
  sub_->add_flag("--overwrite", over_, "Replace an existing node at DST");
  sub_->add_option("--grid", grid_,
                   "Instead: switch the array SRC to this chunk grid in place, moving no chunk "
                   "(rectilinear_bounded: always; regular_bounded: when each dimension's chunks have one size; "
                   "regular, rectilinear: when besides the domain and chunk 0 start at 0; otherwise use 'copy')")
      ->check(CLI::IsMember({"regular", "regular_bounded", "rectilinear", "rectilinear_bounded"}));
}

void ConvertCommand::run() {
  if (!grid_.empty())
    switch_grid();
  else
    to_format();
}

// --grid: only zarr.json changes.
void ConvertCommand::switch_grid() const {
  if (sub_->count("--overwrite") || sub_->count("--zarr-format"))
    throw ArgumentError(
        "convert --grid changes only the grid of SRC, in place; it takes no --overwrite or --zarr-format");
  if (!dst_.empty())
    throw ArgumentError("convert --grid changes SRC in place; to write a copy with another grid use 'zarrpp copy " +
                        src_ + " " + dst_ + " --grid " + grid_ + "'");
  auto z = open_array_at(src_, Use::write);
  const auto before = z.metadata().chunk_grid;
  z.convert_grid(grid_);
  const bool same = z.metadata().chunk_grid == before;
  std::cout << src_ << ": "
            << (same ? "already " + grid_ : "chunk grid is now " + grid_ + " (zarr.json only; no chunk was moved)")
            << "\n";
}

void ConvertCommand::to_format() const {
  ConvertReport rep;
  if (dst_.empty()) {
    rep = format_ == 2 ? convert_to_v2(open_dir(src_, Use::write), "") : convert_to_v3(open_dir(src_, Use::write), "");
  } else {
    if (!over_ && holds_node(dst_))
      throw ConflictError(ErrorCode::already_exists, "'" + dst_ + "' already holds a Zarr node (use --overwrite)");
    auto src = open_dir(src_, Use::read);
    NewDirs made(dst_);
    ProgressLine line("convert", 0);
    rep = format_ == 2 ? convert_to_v2(src, "", open_dir(dst_, Use::create), "", over_, line.callback())
                       : convert_to_v3(src, "", open_dir(dst_, Use::create), "", over_, line.callback());
    made.keep();
  }
  for (const auto& n : rep.notes) std::cout << "note: " << n << "\n";
  std::cout << "converted " << rep.nodes << " node(s) to Zarr v" << format_
            << (dst_.empty() ? " in place; no chunk was read or rewritten"
                             : "; " + std::to_string(rep.chunks_copied) + " chunk(s) copied byte for byte")
            << "\n";
}

}  // namespace

std::unique_ptr<Command> make_convert() { return std::make_unique<ConvertCommand>(); }

}  // namespace zarrpp::cli
