#include <zarrpp/zarrpp.hpp>

int main() {
  auto z = zarrpp::Array::create(zarrpp::MemoryStore::create(),
                                 {.shape = {6, 4}, .chunks = {4, 4}, .dtype = zarrpp::DataType::int32});
  z.fill<std::int32_t>(1);
  z.prepend(zarrpp::NDArray::full<std::int32_t>({3, 4}, 2), 0);
  return z.domain()[0].inclusive_min == -3 && z.read().data<std::int32_t>()[0] == 2 ? 0 : 1;
}
