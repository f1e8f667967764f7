// zarrpp copy: copy an array, re-chunking and re-encoding it (or changing its chunk grid).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "progress.hpp"

namespace zarrpp::cli {

namespace {

class CopyCommand final : public Command {
 public:
  void add(CLI::App& app) override;
  void run() override;

 private:
  ArrayMetadata target_metadata(const Array& src, const ArrayMetadata& m) const;

  std::string src_, dst_, chunks_, comp_, shards_, grid_;
  bool crc_ = false, over_ = false;
};

void CopyCommand::add(CLI::App& app) {
  sub_ = app.add_subcommand("copy", "Copy an array, re-chunking and re-encoding it");
  sub_->add_option("SRC", src_, "The array to copy: its directory or URL")->required();
  sub_->add_option("DST", dst_, "Where the copy goes: a directory or URL")->required();
  sub_->add_option("--chunks", chunks_, "New chunk shape");
  sub_->add_option("--compressor", comp_, "New compressor (as for create)");
  sub_->add_option("--shards", shards_, "New shard shape");
  sub_->add_flag("--crc32c", crc_, "Add crc32c checksums");
  sub_->add_flag("--overwrite", over_, "Replace DST if it exists");
  sub_->add_option("--grid", grid_,
                   "The copy's chunk grid: regular (index 0 at SRC's first element, for readers that know only "
                   "regular) or regular_bounded; default: SRC's")
      ->check(CLI::IsMember({"regular", "regular_bounded"}));
}

// The metadata of the copy: that of the source `src` (its metadata `m`), with what the options change.
ArrayMetadata CopyCommand::target_metadata(const Array& src, const ArrayMetadata& m) const {
  ArrayMetadata dm = m;
  if (!chunks_.empty() || !comp_.empty() || !shards_.empty() || crc_) {
    // Re-encode: what is not given is taken from the source (its codecs inside the shard
    // when sharded; the compressors replaced by --compressor, a checksum added by --crc32c).
    auto [parts, chunks] = codec::split_chain(m.codecs, m.chunk_grid.chunk_shape);
    if (!comp_.empty()) parts.compressors = compressors_of(comp_);
    parts.crc32c = parts.crc32c || crc_;
    if (!shards_.empty())
      parts.shards = parse_shape(shards_, "--shards");
    else if (!chunks_.empty())
      parts.shards = std::nullopt;
    if (!chunks_.empty()) chunks = parse_shape(chunks_, "--chunks");
    // Build the codecs and grid the parts describe, keeping everything else of the source.
    const auto chain = codec::build_chain(parts, m.data_type, chunks);
    ArraySpec spec{.shape = src.shape(),
                   .chunks = chain.grid_chunks,
                   .dtype = src.dtype(),
                   .codecs = chain.codecs,
                   .zarr_format = m.zarr_format};  // a v2 type may have no v3 form
    const ArrayMetadata probe = array_metadata(spec);
    dm.codecs = probe.codecs;
    dm.chunk_grid.chunk_shape = probe.chunk_grid.chunk_shape;
    // New chunks or shards make a regular grid of them (a rectilinear source's sizes are gone).
    if (dm.chunk_grid.rectilinear() && (!chunks_.empty() || !shards_.empty()))
      dm.chunk_grid = ChunkGridMetadata::regular(dm.chunk_grid.chunk_shape);
  }
  if (!grid_.empty()) dm = with_chunk_grid(dm, grid_);
  return dm;
}

void CopyCommand::run() {
  auto src = open_array_at(src_, Use::read);
  const auto& m = src.metadata();
  const ArrayMetadata dm = target_metadata(src, m);
  (void)checked_for_create(dm);  // validated before anything is made
  NewDirs made(dst_);
  {  // the line ends before the note below is printed
    ProgressLine line("copy", 0);
    CopyOptions co{.overwrite = over_};
    co.progress = [&](std::int64_t done, std::int64_t total) { line.set_items(done, total); };
    // copy_array refuses a destination that is the source (or overlaps it) before it looks
    // whether one exists: --overwrite is only suggested where it would help.
    try {
      copy_array(src, open_dir(dst_, Use::create), "", dm, co);
    } catch (const ConflictError& e) {
      if (e.code() != ErrorCode::already_exists || !holds_node(dst_)) throw;
      throw ConflictError(ErrorCode::already_exists, "'" + dst_ + "' already holds a Zarr node (use --overwrite)");
    }
  }
  made.keep();
  const auto& lower = m.chunk_grid.lower_bound;
  if (grid_ == "regular" && std::any_of(lower.begin(), lower.end(), [](std::int64_t x) { return x != 0; }))
    std::cout << "note: index 0 of " << dst_ << " is coordinate " << shape_str(lower) << " of " << src_
              << " (its domain's start); every index moved by that much\n";
}

}  // namespace

std::unique_ptr<Command> make_copy() { return std::make_unique<CopyCommand>(); }

}  // namespace zarrpp::cli
