// The upstream prepend example on a local directory store, step by step.
// Usage: zarrpp-example [DIR]   (default: ./example.zarr, replaced if it exists)
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include <zarrpp/zarrpp.hpp>

namespace {
void print_keys(const zarrpp::Array& z) {
  for (const auto& k : z.stored_chunk_keys()) std::cout << "    " << k << "\n";
}
std::map<std::string, std::uint32_t> checksums(const zarrpp::Array& z) {
  std::map<std::string, std::uint32_t> out;
  for (const auto& k : z.stored_chunk_keys()) {
    const auto b = z.store()->get(k);
    // FNV-1a: enough to show the bytes did not change.
    std::uint32_t h = 2166136261u;
    for (auto c : *b) h = (h ^ c) * 16777619u;
    out[k] = h;
  }
  return out;
}
void print_array(const zarrpp::NDArray& a) {
  const auto& s = a.shape();
  for (std::int64_t i = 0; i < s[0]; ++i) {
    std::cout << "    [";
    for (std::int64_t j = 0; j < s[1]; ++j) std::cout << (j ? " " : "") << a.at<std::int32_t>({i, j});
    std::cout << "]\n";
  }
}
}  // namespace

int main(int argc, char** argv) try {
  const std::filesystem::path dir = argc > 1 ? argv[1] : "example.zarr";
  std::filesystem::remove_all(dir);
  auto store = zarrpp::FileStore::open(dir);
  std::cout << "1. Create a 6x4 int32 array with 4x4 chunks in " << dir.string() << " and fill it with 1\n";
  auto z = zarrpp::Array::create(store, {.shape = {6, 4}, .chunks = {4, 4}, .dtype = zarrpp::DataType::int32});
  z.fill<std::int32_t>(1);
  std::cout << "   shape " << zarrpp::shape_str(z.shape()) << ", chunk grid " << z.metadata().chunk_grid.name()
            << ", stored chunks:\n";
  print_keys(z);
  const auto before = checksums(z);

  std::cout << "2. Prepend a 3x4 block of 2 along axis 0\n";
  z.prepend(zarrpp::NDArray::full<std::int32_t>({3, 4}, 2), 0);
  const auto d = z.domain();
  std::cout << "   shape " << zarrpp::shape_str(z.shape()) << ", domain ((" << d[0].inclusive_min << ", "
            << d[0].exclusive_max << "), (" << d[1].inclusive_min << ", " << d[1].exclusive_max << "))"
            << ", chunk grid " << z.metadata().chunk_grid.name() << ", stored chunks:\n";
  print_keys(z);

  std::cout << "3. The old chunks are unchanged, byte for byte:\n";
  const auto after = checksums(z);
  bool same = true;
  for (const auto& [k, h] : before) {
    const bool ok = after.count(k) && after.at(k) == h;
    same = same && ok;
    char buf[160];
    std::snprintf(buf, sizeof buf, "    %-8s fnv1a %08x -> %08x  %s\n", k.c_str(), h, after.count(k) ? after.at(k) : 0u,
                  ok ? "unchanged" : "CHANGED");
    std::cout << buf;
  }
  for (const auto& [k, h] : after)
    if (!before.count(k)) std::cout << "    " << k << " is new\n";

  std::cout << "4. Read it back (reopened from disk), index 0 is coordinate " << d[0].inclusive_min << ":\n";
  const auto z2 = zarrpp::Array::open(store);
  print_array(z2.read<std::int32_t>());
  return same ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "zarrpp-example: error: " << e.what() << "\n";
  return 1;
}
