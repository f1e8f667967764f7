// zarrpp show: draw an array's chunk map, or a 2-d selection of its values, as SVG or PNG.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"

extern char** environ;

namespace zarrpp::cli {

namespace {

namespace fs = std::filesystem;

// The path a picture replaces: FILE itself, or the file a symbolic link FILE points to (so the
// link stays a link). Refuses a directory or any other non-regular file there.
fs::path target_of(const std::string& file, const char* option) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(file), ec);
  if (ec) p = fs::absolute(file);
  const auto st = fs::status(p, ec);
  if (fs::exists(st) && !fs::is_regular_file(st))
    throw ArgumentError(std::string(option) + " " + file + ": not a regular file; name a file to write the picture to");
  if (!fs::is_directory(p.parent_path(), ec))
    throw ArgumentError(std::string(option) + " " + file + ": the directory " + p.parent_path().string() +
                        " does not exist");
  return p;
}

// A temporary beside `target`, removed when it goes out of scope unless renamed away.
class Temporary {
 public:
  explicit Temporary(const fs::path& target, const char* ext)
      : path_(target.parent_path() /
              ("." + target.filename().string() + ".zarrpp-tmp-" + std::to_string(::getpid()) + ext)) {}
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  ~Temporary() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  const fs::path& path() const { return path_; }
  void write(const std::string& text) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out)
      throw StoreError(ErrorCode::store_failure, "cannot write " + path_.string() + ": " + std::strerror(errno));
  }
  // Renames the finished temporary over `target` (atomic: readers see the old or the new file).
  void commit(const fs::path& target) const {
    std::error_code ec;
    fs::rename(path_, target, ec);
    if (ec) throw StoreError(ErrorCode::store_failure, "cannot write " + target.string() + ": " + ec.message());
  }

 private:
  fs::path path_;
};

// Renders the SVG file `svg` to the PNG file `png` with rsvg-convert (Debian's librsvg2-bin).
void render_png(const fs::path& svg, const fs::path& png) {
  const std::string in = svg.string(), out = png.string();
  const char* argv[] = {"rsvg-convert", "--format", "png",  "--background-color", "white", "--output",
                        out.c_str(),    in.c_str(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "rsvg-convert", nullptr, nullptr, const_cast<char* const*>(argv), environ);
  if (rc == ENOENT)
    throw UnsupportedError(
        "--png needs rsvg-convert, which is not installed (Debian: apt-get install librsvg2-bin); --svg FILE writes "
        "the picture without it");
  if (rc != 0) throw StoreError(ErrorCode::store_failure, std::string("cannot run rsvg-convert: ") + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw StoreError(ErrorCode::store_failure, "rsvg-convert failed to render the picture as PNG (status " +
                                                   std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
}

class ShowCommand final : public Command {
 public:
  void add(CLI::App& app) override {
    sub_ = app.add_subcommand("show", "Draw an array's chunk map, or a 2-d SELECTION of its values, as SVG or PNG");
    sub_->add_option("ARRAY", array_, "The array: its directory or URL")->required();
    sub_->add_option("SELECTION", sel_,
                     "Draw these values instead of the chunk map: slices and integers leaving 2 dimensions, e.g. "
                     "\"0, :, :\" or \"::4, 100:200\"");
    sub_->add_option("--svg", svg_, "Write the picture as SVG to FILE (- for standard output)");
    sub_->add_option("--png", png_, "Write the picture as PNG to FILE (through rsvg-convert)");
    sub_->add_option("--size", size_, "Chunk map: pixels of the grid's longer side")
        ->check(CLI::Range(16, 8192))
        ->default_val(400);
    sub_->add_option("--max-cells", max_cells_, "Chunk map: cells along a side before chunks are drawn together")
        ->check(CLI::Range(1, 1000))
        ->default_val(40);
    sub_->add_option("--max-pixels", max_pixels_,
                     "Values: elements along a side before the selection is read with a larger step")
        ->check(CLI::Range(1, 8192))
        ->default_val(1024);
    sub_->add_flag("--coords", coords_,
                   "SELECTION is in the domain's coordinates (e.g. \"-10:0, :\"), not zero-based from the lower bound");
  }

  void run() override {
    if (svg_.empty() && png_.empty())
      throw ArgumentError("show: say where the picture goes: --svg FILE (- for standard output) and/or --png FILE");
    if (coords_ && sel_.empty()) throw ArgumentError("--coords applies to SELECTION, and none was given");
    // Check both destinations before drawing, so a bad one fails before any work.
    const fs::path svg_target = svg_.empty() || svg_ == "-" ? fs::path() : target_of(svg_, "--svg");
    const fs::path png_target = png_.empty() ? fs::path() : target_of(png_, "--png");
    if (!svg_target.empty() && svg_target == png_target)
      throw ArgumentError("--svg and --png name the same file " + svg_);
    const Array z = open_array_at(array_);
    const std::string picture = sel_.empty()
                                    ? chunk_map_svg(z, ChunkMapOptions{.size = size_, .max_cells = max_cells_})
                                    : slice_image_svg(z, parse_selection(sel_),
                                                      SliceImageOptions{.max_pixels = max_pixels_, .coords = coords_});
    if (!png_target.empty()) {
      const Temporary svg_file(png_target, ".svg"), png_file(png_target, ".png");
      svg_file.write(picture);
      render_png(svg_file.path(), png_file.path());
      png_file.commit(png_target);
    }
    if (svg_ == "-") {
      std::cout << picture << std::flush;
    } else if (!svg_target.empty()) {
      const Temporary file(svg_target, ".svg");
      file.write(picture);
      file.commit(svg_target);
    }
  }

 private:
  std::string array_, sel_, svg_, png_;
  int size_ = 400, max_cells_ = 40, max_pixels_ = 1024;
  bool coords_ = false;
};

}  // namespace

std::unique_ptr<Command> make_show() { return std::make_unique<ShowCommand>(); }

}  // namespace zarrpp::cli
