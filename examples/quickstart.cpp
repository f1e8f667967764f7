// The README's quickstart, compiled so it stays true.
#include <iostream>

#include <zarrpp/zarrpp.hpp>
using namespace zarrpp;

int main(int argc, char** argv) {
  auto store = FileStore::open(argc > 1 ? argv[1] : "example.zarr");  // or MemoryStore::create()
  auto z = Array::create(store, "ones", {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32, .overwrite = true});
  z.fill<std::int32_t>(1);
  z.prepend(NDArray::full<std::int32_t>({3, 4}, 2), /*axis=*/0);
  const auto d = z.domain();                                // {{-3, 6}, {0, 4}}
  auto top = z.read<std::int32_t>({slice(0, 5), all});      // zero-based, NumPy-like
  std::cout << "shape " << shape_str(z.shape()) << ", domain starts at " << d[0].inclusive_min << ", top-left "
            << top.at<std::int32_t>({0, 0}) << ", row 3 " << top.at<std::int32_t>({3, 0}) << "\n";
  return 0;
}
