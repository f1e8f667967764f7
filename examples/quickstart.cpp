#include <iostream>

#include <zarrpp/zarrpp.hpp>
using namespace zarrpp;

int main(int argc, char** argv) try {
  // A folder, made by the first write (or MemoryStore::create(): in memory).
  auto store = FileStore::open(argc > 1 ? argv[1] : "example.zarr");
  // .overwrite = true: a second run replaces the array (without it, it stops: "already exists").
  const ArraySpec spec{.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32, .overwrite = true};
  auto z = Array::create(store, "ones", spec);
  z.fill<std::int32_t>(1);
  z.prepend(NDArray::full<std::int32_t>({3, 4}, 2), /*axis=*/0);  // 3 rows in front; no chunk moves
  const auto d = z.domain();                                      // {{-3, 6}, {0, 4}}: coordinates
  auto top = z.read<std::int32_t>({slice(0, 5), all});            // zero-based, NumPy-like
  std::cout << "shape " << shape_str(z.shape()) << ", domain starts at " << d[0].inclusive_min << ", top-left "
            << top.at<std::int32_t>({0, 0}) << ", row 3 " << top.at<std::int32_t>({3, 0}) << "\n";
  return 0;
} catch (const Error& e) {  // every zarrpp error says what went wrong, in one line
  std::cerr << "error: " << e.what() << "\n";
  return 1;
}
