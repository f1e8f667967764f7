// zarrpp show: draw an array's chunk map, or a 2-d selection of its values, as SVG or PNG.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "output.hpp"
#include "zarrpp/view/picture.hpp"

extern char** environ;

namespace zarrpp::cli {

namespace {

namespace fs = std::filesystem;

// Writes all of `text` to a pipe (a child that stops reading early fails on its own: EPIPE ends
// the writing, the child's status says why).
void feed(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t n = text.size();
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

// Renders `svg` as PNG with rsvg-convert (Debian's librsvg2-bin), its output going to `out_fd`:
// the SVG through a pipe, so no other file is made.
void render_png(const std::string& svg, int out_fd) {
  int in[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw StoreError(std::string("cannot make a pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  const char* argv[] = {"rsvg-convert", "--format", "png", "--background-color", "white", nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "rsvg-convert", &actions, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  if (rc != 0) {
    ::close(in[1]);
    if (rc == ENOENT)
      throw UnsupportedError(
          "--png needs rsvg-convert, which is not installed (Debian: apt-get install librsvg2-bin); --svg FILE "
          "writes the picture without it");
    throw StoreError(std::string("cannot run rsvg-convert: ") + std::strerror(rc));
  }
  struct sigaction ignore{}, old{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);  // a child that exits early must not end this process
  feed(in[1], svg);
  ::close(in[1]);
  ::sigaction(SIGPIPE, &old, nullptr);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw StoreError("rsvg-convert failed to render the picture as PNG (status " +
                     std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
}

// Writes the picture to FILE ("-": standard output), as SVG or through rsvg-convert as PNG.
void write_picture(const std::string& file, const std::string& svg, bool png) {
  if (file == "-") {
    if (png) {
      // Rendered into memory first, then written by this process: a failure to write standard
      // output is then this command's own one error, not rsvg-convert's.
      const int mem = ::memfd_create("zarrpp-png", MFD_CLOEXEC);
      if (mem < 0) throw StoreError(std::string("cannot make a buffer for the picture: ") + std::strerror(errno));
      try {
        render_png(svg, mem);
        std::string bytes(static_cast<std::size_t>(::lseek(mem, 0, SEEK_END)), '\0');
        if (::pread(mem, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
          throw StoreError(std::string("cannot read the rendered picture back: ") + std::strerror(errno));
        std::cout << bytes << std::flush;
      } catch (...) {
        ::close(mem);
        throw;
      }
      ::close(mem);
    } else {
      std::cout << svg << std::flush;
    }
    return;
  }
  FileReplacement out(file, png ? "--png" : "--svg");
  if (png)
    render_png(svg, out.descriptor());
  else
    out.write({reinterpret_cast<const std::uint8_t*>(svg.data()), svg.size()});
  out.commit();
}

// Whether two outputs are one: both standard output, or one file (through links too).
bool same_place(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return a == b;
  std::error_code ec;
  const auto resolve = [&](const std::string& f) {
    fs::path p = fs::absolute(f);
    for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
      const auto to = fs::read_symlink(p, ec);
      p = to.is_absolute() ? to : p.parent_path() / to;
    }
    return fs::weakly_canonical(p, ec);
  };
  return resolve(a) == resolve(b);
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
    sub_->add_option("--png", png_, "Write the picture as PNG to FILE (- for standard output; through rsvg-convert)");
    sub_->add_option("--size", size_, "Chunk map: pixels of the grid's longer side")
        ->check(CLI::Range(16, 8192))
        ->default_val(400);
    sub_->add_option("--max-cells", max_cells_, "Chunk map: cells along a side before chunks are drawn together")
        ->check(CLI::Range(1, 500))
        ->default_val(40);
    sub_->add_option("--max-pixels", max_pixels_,
                     "Values: elements along a side before the selection is read with a larger step")
        ->check(CLI::Range(1, 4096))
        ->default_val(1024);
    sub_->add_flag("--coords", coords_,
                   "SELECTION is in the domain's coordinates (e.g. \"-10:0, :\"), not zero-based from the lower bound");
  }

  void run() override {
    if (svg_.empty() && png_.empty())
      throw ArgumentError("show: say where the picture goes: --svg FILE and/or --png FILE (- for standard output)");
    if (coords_ && sel_.empty()) throw ArgumentError("--coords applies to SELECTION, and none was given");
    if (!svg_.empty() && !png_.empty() && same_place(svg_, png_))
      throw ArgumentError("--svg and --png name the same " + (svg_ == "-" ? std::string("output") : "file " + svg_));
    const Array z = open_array_at(array_, Use::read);
    // Check both destinations before drawing, so a bad one fails before any work.
    if (!svg_.empty()) check_output(svg_, "--svg", z);
    if (!png_.empty()) check_output(png_, "--png", z);
    const std::string picture = sel_.empty()
                                    ? chunk_map_svg(z, ChunkMapOptions{.size = size_, .max_cells = max_cells_})
                                    : slice_image_svg(z, parse_selection(sel_),
                                                      SliceImageOptions{.max_pixels = max_pixels_, .coords = coords_});
    if (!png_.empty()) write_picture(png_, picture, true);
    if (!svg_.empty()) write_picture(svg_, picture, false);
  }

 private:
  std::string array_, sel_, svg_, png_;
  int size_ = 400, max_cells_ = 40, max_pixels_ = 1024;
  bool coords_ = false;
};

}  // namespace

std::unique_ptr<Command> make_show() { return std::make_unique<ShowCommand>(); }

}  // namespace zarrpp::cli
