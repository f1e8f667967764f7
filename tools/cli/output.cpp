// Output files and standard output (output.hpp).
#include "output.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <streambuf>
#include <utility>

namespace zarrpp::cli {

namespace {

namespace fs = std::filesystem;

// The file a write to `p` lands in: through its chain of links (the last one need not exist),
// made absolute with the folders above it resolved.
fs::path landing(fs::path p) {
  std::error_code ec;
  p = fs::absolute(p, ec);
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    const auto to = fs::read_symlink(p, ec);
    if (ec) break;
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return fs::weakly_canonical(p, ec);
}

// Where the local array `z` lives: its folder, or its zip file (`archive` true); nullopt for
// remote and memory stores.
std::optional<fs::path> local_place(const Array& z, bool& archive) {
  StorePtr s = z.store();
  std::string path = z.path();
  if (const auto* p = dynamic_cast<const PrefixStore*>(s.get())) {
    path = p->prefix() + path;
    s = p->inner();
  }
  std::error_code ec;
  if (const auto* f = dynamic_cast<const FileStore*>(s.get())) {
    archive = false;
    return fs::weakly_canonical(fs::absolute(f->root() / path, ec), ec);
  }
  if (const auto* zip = dynamic_cast<const ZipStore*>(s.get())) {
    archive = true;
    return fs::weakly_canonical(zip->path(), ec);
  }
  return std::nullopt;
}

bool is_zarr_document(const fs::path& p) {
  const std::string n = p.filename().string();
  return n == "zarr.json" || n == ".zarray" || n == ".zgroup" || n == ".zattrs" || n == ".zmetadata";
}

}  // namespace

namespace {

// The array folder (v2 .zarray, or a zarr.json of node_type "array") that `dir` is or lies in;
// nullopt when none of its folders is one. An output there could replace another array's chunk.
std::optional<fs::path> enclosing_array(fs::path dir) {
  std::error_code ec;
  for (; !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / ".zarray", ec)) return dir;
    const fs::path doc = dir / "zarr.json";
    if (fs::is_regular_file(doc, ec) && fs::file_size(doc, ec) < (16u << 20)) {
      std::ifstream in(doc, std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      try {
        const Json j = parse_json_document(text, doc.string());
        if (j.is_object() && j.value("node_type", "") == "array") return dir;
      } catch (const Error&) {
        // not a document zarrpp reads: not taken for an array here
      }
    }
    if (dir == dir.root_path()) break;
  }
  return std::nullopt;
}

// The file standard output is, when it is a regular file (`> file`, `>> file`).
std::optional<fs::path> standard_output_file() {
  struct stat st{};
  if (::fstat(STDOUT_FILENO, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/fd/1", ec);
  return ec ? std::nullopt : std::optional<fs::path>(p);
}

}  // namespace

void check_output(const std::string& file, const char* option, const Array& z) {
  std::string what = std::string(option) + " " + file;
  std::error_code ec;
  fs::path p;
  if (file == "-" || file == "/dev/stdout") {  // standard output redirected into a file: the same rules
    const auto out = standard_output_file();
    if (!out) return;
    p = fs::weakly_canonical(*out, ec);
    what += " (standard output, " + p.string() + ")";
  } else {
    p = landing(file);
    if (fs::is_directory(p, ec)) throw ArgumentError(what + ": a directory; name a file to write to");
    if (!fs::is_directory(p.parent_path(), ec))
      throw ArgumentError(what + ": " + p.parent_path().string() +
                          (fs::exists(p.parent_path(), ec) ? " is not a directory" : " does not exist"));
  }
  bool archive = false;
  if (const auto place = local_place(z, archive)) {
    const auto rel = p.lexically_relative(*place);
    const bool inside = !rel.empty() && *rel.begin() != "..";
    if (archive && p == *place)
      throw ArgumentError(what + " is the zip file " + place->string() +
                          " holding the array; write the output elsewhere");
    if (!archive && inside)
      throw ArgumentError(what + " is inside the array " + place->string() +
                          ", whose files it could replace; write the output elsewhere");
  }
  if (is_zarr_document(p))
    throw ArgumentError(what + " is named as a Zarr node's metadata (" + p.filename().string() +
                        "), which a Zarr reader would read; write the output elsewhere");
  if (const auto other = enclosing_array(p.parent_path()))
    throw ArgumentError(what + " is inside the array " + other->string() +
                        ", whose files it could replace; write the output elsewhere");
}

namespace {

// std::cout's buffer: 64 KiB written to descriptor 1, keeping the first failure's errno.
class CheckedStdout final : public std::streambuf {
 public:
  CheckedStdout() { setp(buf_, buf_ + sizeof buf_); }
  int error() const { return error_; }
  bool drain() {
    const char* p = pbase();
    std::size_t n = static_cast<std::size_t>(pptr() - pbase());
    setp(buf_, buf_ + sizeof buf_);
    while (n > 0 && error_ == 0) {
      const ssize_t w = ::write(STDOUT_FILENO, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) error_ = errno;
      if (w <= 0) break;
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    return error_ == 0;
  }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  char buf_[1 << 16];
  int error_ = 0;
};

// Never destroyed: std::cout is flushed again by the runtime at exit, after function-local
// statics are gone, so its buffer must outlive them (finish_standard_output also gives std::cout
// its own buffer back).
CheckedStdout& checked() {
  static auto* const out = new CheckedStdout;
  return *out;
}

std::streambuf* original_buffer = nullptr;

}  // namespace

void check_standard_output() { original_buffer = std::cout.rdbuf(&checked()); }

std::string finish_standard_output() {
  std::cout.flush();
  if (original_buffer != nullptr) std::cout.rdbuf(std::exchange(original_buffer, nullptr));
  if (std::cout.good() && checked().error() == 0) return "";
  const int e = checked().error();
  return std::string("cannot write standard output") + (e != 0 ? std::string(": ") + std::strerror(e) : "") +
         " (what was written there is incomplete)";
}

}  // namespace zarrpp::cli
