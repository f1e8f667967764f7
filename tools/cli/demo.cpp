// zarrpp demo: the prepend walkthrough, step by step, in a local directory.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "commands.hpp"
#include "common.hpp"
#include "print.hpp"
#include "zarrpp/view/picture.hpp"

namespace fs = std::filesystem;

namespace zarrpp::cli {

namespace {

using Checksums = std::map<std::string, std::uint32_t>;

// The CRC32C of each stored chunk of `z`, by key.
Checksums checksums(const std::shared_ptr<FileStore>& store, const Array& z) {
  Checksums out;
  for (const auto& k : z.stored_chunk_keys()) {
    const auto b = *store->get(k);
    out[k] = crc32c(b);
  }
  return out;
}

void print_keys(const Array& z) {
  for (const auto& k : z.stored_chunk_keys()) std::cout << "      " << k << "\n";
}

// Writes the array's chunk map as `name` in the demo's directory and says where.
void write_chunk_map(const Array& z, const fs::path& dir, const std::string& name) {
  const fs::path file = dir / name;
  std::error_code ec;
  fs::remove(file, ec);  // an earlier run's picture (a link there is replaced, not followed)
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << chunk_map_svg(z);
  if (!out.flush()) throw StoreError("cannot write '" + file.string() + "'");
  std::cout << "   chunk map: " << file.string() << "\n";
}

class DemoCommand final : public Command {
 public:
  void add(CLI::App& app) override {
    sub_ = app.add_subcommand("demo", "The prepend walkthrough, step by step, in a local directory");
    sub_->add_option("DIR", dir_, "Directory to (re)create");
  }
  void run() override;

 private:
  std::shared_ptr<FileStore> prepare(const fs::path& dir) const;
  Array create_and_fill(const std::shared_ptr<FileStore>& store) const;
  void prepend_block(Array& z) const;
  void read_back(const std::shared_ptr<FileStore>& store, std::int64_t first) const;

  std::string dir_ = "demo.zarr";
};

// The demo's directory, with its marker in it.
std::shared_ptr<FileStore> DemoCommand::prepare(const fs::path& dir) const {
  // Only an empty folder or an earlier demo's output (which holds the marker) is used; the demo
  // replaces only its own array there.
  const fs::path marker = dir / ".zarrpp-demo";
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dir, ec))) {
    if (!fs::is_directory(dir)) throw ArgumentError("'" + dir_ + "' exists and is not a directory; choose another DIR");
    if (!fs::is_empty(dir, ec) && !fs::is_regular_file(fs::symlink_status(marker, ec)))
      throw ArgumentError("'" + dir_ + "' is not empty and not an earlier demo's output; choose another DIR");
  }
  NewDirs made(dir_);
  fs::create_directories(dir);  // the marker goes in first (the store would make it only on its first write)
  auto store = FileStore::open(dir);
  {
    std::ofstream out(marker);
    out << "written by 'zarrpp demo': this folder may be replaced by the next demo run\n";
    if (!out.flush()) throw StoreError("cannot write '" + marker.string() + "'");
  }
  made.keep();
  return store;
}

// Step 1.
Array DemoCommand::create_and_fill(const std::shared_ptr<FileStore>& store) const {
  std::cout << "1. Create a 6x4 int32 array with 4x4 chunks and fill it with 1\n"
            << "   (as: zarrpp create " << dir_ << " --shape 6,4 --chunks 4,4 --dtype int32)\n"
            << "   (as: zarrpp set " << dir_ << " --value 1)\n";
  auto z = Array::create(store, {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32, .overwrite = true});
  z.fill<std::int32_t>(1);
  std::cout << "   shape " << shape_str(z.shape()) << ", chunk grid '" << z.metadata().chunk_grid.name()
            << "', stored chunks:\n";
  print_keys(z);
  write_chunk_map(z, dir_, "chunk-map-before.svg");
  return z;
}

// Step 2.
void DemoCommand::prepend_block(Array& z) const {
  std::cout << "\n2. Prepend a 3x4 block of 2 along axis 0\n"
            << "   (as: zarrpp prepend " << dir_ << " --axis 0 --from block.npy)\n";
  z.prepend(NDArray::full<std::int32_t>({3, 4}, 2), 0);
  const auto d = z.domain();
  std::cout << "   shape " << shape_str(z.shape()) << "\n   domain ((" << d[0].inclusive_min << ", "
            << d[0].exclusive_max << "), (" << d[1].inclusive_min << ", " << d[1].exclusive_max << "))\n   chunk grid '"
            << z.metadata().chunk_grid.name() << "' " << z.metadata().chunk_grid.to_json()["configuration"].dump()
            << "\n   stored chunks:\n";
  print_keys(z);
  write_chunk_map(z, dir_, "chunk-map-after.svg");
}

// Step 3 (after its heading): each old chunk's checksum before and after; whether all are unchanged.
bool compare_checksums(const Checksums& before, const Checksums& after) {
  bool same = true;
  for (const auto& [k, h] : before) {
    const bool ok = after.count(k) && after.at(k) == h;
    same = same && ok;
    char buf[160];
    std::snprintf(buf, sizeof buf, "      %-8s %08x -> %08x  %s\n", k.c_str(), h, after.count(k) ? after.at(k) : 0u,
                  ok ? "unchanged" : "CHANGED");
    std::cout << buf;
  }
  for (const auto& [k, h] : after)
    if (!before.count(k)) std::cout << "      " << k << " is new\n";
  return same;
}

// Step 4: `first` is the coordinate of index 0.
void DemoCommand::read_back(const std::shared_ptr<FileStore>& store, std::int64_t first) const {
  std::cout << "\n4. Read it back from disk (index 0 is coordinate " << first << ")\n"
            << "   (as: zarrpp get " << dir_ << ")\n";
  const auto a = Array::open(store).read();
  std::ostringstream os;
  print_array(os, a);
  std::istringstream is(os.str());
  for (std::string line; std::getline(is, line);) std::cout << "   " << line << "\n";
}

void DemoCommand::run() {
  const fs::path dir = dir_;
  const auto store = prepare(dir);
  std::cout << "zarrpp demo: growing an array in front, in " << dir.string() << "\n\n";
  auto z = create_and_fill(store);
  const auto before = checksums(store, z);
  prepend_block(z);
  std::cout << "\n3. The chunks that were there are unchanged, byte for byte (CRC32C of each file):\n";
  const auto after = checksums(store, z);
  const bool same = compare_checksums(before, after);
  read_back(store, z.domain()[0].inclusive_min);
  if (!same) throw Error(ErrorCode::corrupt_data, "demo: an old chunk changed");
  std::cout << "\nDone: prepending wrote one new chunk and zarr.json; nothing else moved.\n";
}

}  // namespace

std::unique_ptr<Command> make_demo() { return std::make_unique<DemoCommand>(); }

}  // namespace zarrpp::cli
