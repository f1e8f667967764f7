#include <gtest/gtest.h>

#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;

TEST(Npy, RoundTripsEveryDataType) {
  for (const char* t : {"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
                        "float32", "float64", "complex64", "complex128", "r24"}) {
    NDArray a(DataType::parse(t), {3, 2});
    for (std::size_t i = 0; i < a.nbytes(); ++i) a.bytes()[i] = static_cast<std::uint8_t>(i % 2);
    const Bytes b = npy::serialize(a);
    EXPECT_EQ((b.size() - a.nbytes()) % 64, 0u);
    EXPECT_EQ(npy::parse(b), a) << t;
  }
}

TEST(Npy, BigEndianAndFortranOrder) {
  // {'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), } holding [[1,2,3],[4,5,6]]
  std::string header = "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<std::uint8_t>(header.size()), 0};
  b.insert(b.end(), header.begin(), header.end());
  for (int v : {1, 4, 2, 5, 3, 6}) {  // column-major
    b.push_back(0);
    b.push_back(static_cast<std::uint8_t>(v));
  }
  const NDArray a = npy::parse(b);
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_EQ(a.to_vector<std::int16_t>(), (std::vector<std::int16_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, BadFilesAreClearErrors) {
  EXPECT_THROW(npy::parse(Bytes{1, 2, 3}), Error);
  NDArray a(DataType::int32, {4});
  Bytes b = npy::serialize(a);
  b.pop_back();
  try {
    npy::parse(b);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(16 bytes)"), std::string::npos) << e.what();
  }
  std::string h(reinterpret_cast<const char*>(b.data() + 10), 20);
  Bytes c = npy::serialize(a);
  const std::string obj = "'<i4'";
  auto pos = std::search(c.begin(), c.end(), obj.begin(), obj.end());
  std::copy_n("'|O1'", 5, pos);
  EXPECT_THROW(npy::parse(c), Error);
}
