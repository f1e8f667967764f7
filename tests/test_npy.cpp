#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;

TEST(Npy, RoundTripsEveryDataType) {
  for (const char* t : {"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
                        "float32", "float64", "complex64", "complex128", "r24"}) {
    NDArray a(DataType::parse(t), {3, 2});
    for (std::size_t i = 0; i < a.nbytes(); ++i) a.bytes()[i] = static_cast<std::uint8_t>(i % 2);
    const Bytes b = npy::serialize(a);
    EXPECT_EQ((b.size() - a.nbytes()) % 64, 0u);
    const NDArray back = npy::parse(b);
    EXPECT_EQ(back.shape(), a.shape()) << t;
    EXPECT_EQ(back.bytes(), a.bytes()) << t;
    // .npy says V3 for r24: NumPy's V<n>, the same elements
    EXPECT_EQ(back.dtype(), std::string(t) == "r24" ? DataType::raw_bytes(3) : a.dtype()) << t;
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
  Bytes c = npy::serialize(a);
  const std::string obj = "'<i4'";
  auto pos = std::search(c.begin(), c.end(), obj.begin(), obj.end());
  std::copy_n("'|O1'", 5, pos);
  EXPECT_THROW(npy::parse(c), Error);
}

namespace {
std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("zarrpp-npy-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}
void write_file(const std::filesystem::path& p, const Bytes& b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}
Bytes read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}
}  // namespace

TEST(Npy, ReaderReadsPiecesInPlaceAndLoadViewKeepsFortranOrder) {
  const auto d = temp_dir("reader");
  // Big-endian, Fortran order: [[1,2,3],[4,5,6]] as int16.
  std::string header = "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<std::uint8_t>(header.size()), 0};
  b.insert(b.end(), header.begin(), header.end());
  for (int v : {1, 4, 2, 5, 3, 6}) b.insert(b.end(), {0, static_cast<std::uint8_t>(v)});
  write_file(d / "f.npy", b);
  {
    npy::Reader r(d / "f.npy");
    EXPECT_EQ(r.shape(), (Shape{2, 3}));
    EXPECT_TRUE(r.fortran_order());
    EXPECT_EQ(r.data_bytes(), 12u);
    std::int16_t part[2];
    r.read(4, 4, part, 2);  // the second column, converted to native order
    EXPECT_EQ(part[0], 2);
    EXPECT_EQ(part[1], 5);
    EXPECT_THROW(r.read(10, 4, part, 1), ArgumentError);
  }
  const auto l = npy::load_view(d / "f.npy", 2);
  EXPECT_EQ(NDArray::copy_of(l.view).to_vector<std::int16_t>(), (std::vector<std::int16_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(l.view.data(), l.storage.view().data());  // no copy: a strided view of the file's bytes
  EXPECT_EQ(npy::load(d / "f.npy"), npy::parse(b));
  // A file cut short after the reader checked it: an error, not a crash or stale bytes.
  npy::Reader r(d / "f.npy");
  std::filesystem::resize_file(d / "f.npy", b.size() - 4);
  std::int16_t all[6];
  try {
    r.read(0, 12, all, 1);
    FAIL() << "a truncated file was read";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("changed while it was being read"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(d);
}

TEST(Npy, LargeFilesLoadInParallelParts) {
  const auto d = temp_dir("large");
  NDArray a(DataType::uint32, {3, 1000003});  // 12 MB: more than one part per thread
  auto* p = reinterpret_cast<std::uint32_t*>(a.raw_data());
  for (std::int64_t i = 0; i < a.size(); ++i) p[i] = static_cast<std::uint32_t>(i * 2654435761u);
  npy::save(d / "a.npy", a);
  for (std::size_t threads : {1, 2, 5}) {
    const auto l = npy::load_view(d / "a.npy", threads);
    EXPECT_EQ(l.storage, a) << threads;
  }
  std::filesystem::remove_all(d);
}

TEST(Npy, WriterReplacesOnlyWhenComplete) {
  const auto d = temp_dir("writer");
  NDArray a(DataType::int32, {4, 3});
  for (std::int64_t i = 0; i < a.size(); ++i)
    reinterpret_cast<std::int32_t*>(a.raw_data())[i] = static_cast<std::int32_t>(i);
  write_file(d / "out.npy", Bytes{'o', 'l', 'd'});
  auto no_temps = [&] {
    for (const auto& e : std::filesystem::directory_iterator(d))
      if (e.path().filename().string().find("zarrpp-tmp") != std::string::npos) return false;
    return true;
  };
  {
    npy::Writer w(d / "out.npy", a.dtype(), a.shape());
    w.write({reinterpret_cast<const std::uint8_t*>(a.raw_data()), 24});
    EXPECT_THROW(w.commit(), ArgumentError);  // half the data
  }
  EXPECT_EQ(read_file(d / "out.npy"), (Bytes{'o', 'l', 'd'}));
  EXPECT_TRUE(no_temps());
  {
    npy::Writer w(d / "out.npy", a.dtype(), a.shape());
    const auto* p = reinterpret_cast<const std::uint8_t*>(a.raw_data());
    w.write({p, 20});
    EXPECT_EQ(read_file(d / "out.npy"), (Bytes{'o', 'l', 'd'}));  // not replaced before commit
    w.write({p + 20, 28});
    EXPECT_THROW(w.write({p, 1}), ArgumentError);  // more than the shape holds
    w.commit();
  }
  EXPECT_EQ(read_file(d / "out.npy"), npy::serialize(a));
  EXPECT_TRUE(no_temps());
  EXPECT_THROW(npy::Writer(d, a.dtype(), a.shape()), ArgumentError);  // a directory
  EXPECT_THROW(npy::Writer(d / "missing" / "x.npy", a.dtype(), a.shape()), StoreError);
  std::filesystem::remove_all(d);
}

namespace {
// A version 1.0 (or `major`.`minor`) .npy file with `header` (padded as NumPy pads it) and `data`.
Bytes npy_with_header(std::string header, std::size_t data_bytes, int major = 1, int minor = 0) {
  const std::size_t pre = major == 1 ? 10 : 12;
  header.append((64 - (pre + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<std::uint8_t>(major), static_cast<std::uint8_t>(minor)};
  for (std::size_t i = 0; i < pre - 8; ++i) b.push_back(static_cast<std::uint8_t>(header.size() >> (8 * i)));
  b.insert(b.end(), header.begin(), header.end());
  b.resize(b.size() + data_bytes, 1);
  return b;
}
}  // namespace

// Issue 30, item 5: the header parser accepts a subset of what NumPy's accepts (ast.literal_eval,
// then exactly three keys of the right types) and refuses a repeated key, which NumPy reads keeping
// the last. The CLI test runs the same and more cases with NumPy as the oracle.
TEST(Npy, HeadersNumPyRefusesAreRefused) {
  const std::string d = "'descr': '<i4', ";
  const std::string o = "'fortran_order': False, ";
  const std::vector<std::pair<std::string, std::size_t>> refused = {
      {"{" + d + o + "'shape': (2,), 'shape': (4,), }", 32},  // the old parser read (2, 4)
      {"{'descr': '<i2', " + d + o + "'shape': (4,), }", 16},
      {"{" + d + o + "'shape': (4), }", 16},  // an int, not a tuple
      {"{" + d + o + "'shape': (2 2), }", 16},
      {"{" + d + o + "'shape': (4.0,), }", 16},
      {"{" + d + o + "'shape': (04,), }", 16},
      {"{" + d + o + "'shape': (4,,), }", 16},
      {"{" + d + o + "'shape': [4], }", 16},
      {"{" + d + o + "'shape': (4LL,), }", 16},
      {"{" + d + "'fortran_order': 0, 'shape': (4,), }", 16},
      {"{" + d + "'fortran_order': Falsey, 'shape': (4,), }", 16},
      {"{" + d + "'shape': (4,), }", 16},
      {"{" + d + o + "'shape': (4,), 'extra': 1, }", 16},
      {"{'descr': '<i4' 'fortran_order': False, 'shape': (4,), }", 16},
      {"{" + d + "'fortran_order': False 'shape': (4,), }", 16},
      {"{" + d + o + "'shape': (4,), , }", 16},
      {"{'descr': '<i4' '<i4', " + o + "'shape': (4,), }", 16},
      {"{" + d + o + "'shape': (4,), } x", 16},
      {"{" + d + o + "'shape': (4,), }{}", 16},
      {"{" + d + o + "'shape': (4,), ", 16},
      {"['descr', '<i4']", 16},
  };
  for (const auto& [h, n] : refused) EXPECT_THROW(npy::parse(npy_with_header(h, n)), ArgumentError) << h;
  const std::string plain = "{" + d + o + "'shape': (4,), }";
  EXPECT_THROW(npy::parse(npy_with_header(plain, 16, 1, 1)), ArgumentError);                           // format 1.1
  EXPECT_THROW(npy::parse(npy_with_header(plain + std::string(10050, ' '), 16, 2)), ArgumentError);    // > 10,000
  EXPECT_THROW(npy::parse(npy_with_header("{" + d + o + "'shape': (4L,), }", 16, 3)), ArgumentError);  // no L in 3.0
  // What NumPy reads, zarrpp reads the same.
  EXPECT_EQ(npy::parse(npy_with_header(plain, 16)).shape(), (Shape{4}));
  EXPECT_EQ(
      npy::parse(npy_with_header("{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2, 2)}", 16)).shape(),
      (Shape{2, 2}));
  EXPECT_EQ(npy::parse(npy_with_header("{" + d + o + "'shape': (2L, 2L), }", 16)).shape(), (Shape{2, 2}));
  EXPECT_EQ(
      npy::parse(npy_with_header("{'descr': '<i4',\n 'fortran_order': False,\n 'shape': (\n4,\n),\n}", 16)).shape(),
      (Shape{4}));
  EXPECT_EQ(npy::parse(npy_with_header("{'shape': (1, 4), 'fortran_order': True, 'descr': '<i4'}", 16, 2)).shape(),
            (Shape{1, 4}));
  EXPECT_EQ(npy::parse(npy_with_header(plain, 16, 3)).shape(), (Shape{4}));
  EXPECT_EQ(npy::parse(npy_with_header("{" + d + o + "'shape': (), }", 4)).shape(), (Shape{}));
}

TEST(Npy, StructuredTypesRoundTripInNumpysDescr) {
  // NumPy's descr of a nested structured type with a subarray field and fixed-width text.
  const DataType inner = DataType::structured({{"x", DataType::uint16, {}, 0}, {"y", DataType::uint8, {}, 0}});
  const DataType t = DataType::structured({{"a", DataType::int32, {}, 0},
                                           {"n", inner, {2}, 0},
                                           {"s", DataType::fixed_bytes(3), {}, 0},
                                           {"f", DataType::float64, {2, 2}, 0}});
  EXPECT_EQ(t.size(), 4u + 2 * 3 + 3 + 32);
  EXPECT_EQ(npy::descr_of(t),
            "[('a', '<i4'), ('n', [('x', '<u2'), ('y', '|u1')], (2,)), ('s', '|S3'), "
            "('f', '<f8', (2,2))]");
  NDArray a(t, {3});
  for (std::size_t i = 0; i < a.nbytes(); ++i) a.bytes()[i] = static_cast<std::uint8_t>(i * 7);
  EXPECT_EQ(npy::parse(npy::serialize(a)), a);
  // Big-endian fields are swapped field by field into native order.
  std::string header =
      "{'descr': [('a', '>i2'), ('b', '|u1'), ('c', '>u2', (2,))], 'fortran_order': False, "
      "'shape': (1,), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<std::uint8_t>(header.size()), 0};
  b.insert(b.end(), header.begin(), header.end());
  for (int v : {0, 1, 9, 0, 2, 0, 3}) b.push_back(static_cast<std::uint8_t>(v));
  const NDArray be = npy::parse(b);
  EXPECT_EQ(be.dtype().fields().size(), 3u);
  EXPECT_EQ(be.bytes(), (Bytes{1, 0, 9, 2, 0, 3, 0}));
  // Padding and mixed byte orders are refused by name.
  for (const std::string d : {"[('a', '<i4'), ('', '|V4')]", "[('a', '<i4'), ('b', '>i4')]", "[]"}) {
    std::string h = "{'descr': " + d + ", 'fortran_order': False, 'shape': (0,), }";
    h.append(128 - 10 - h.size() - 1, ' ');
    h += '\n';
    Bytes f = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<std::uint8_t>(h.size()), 0};
    f.insert(f.end(), h.begin(), h.end());
    EXPECT_THROW(npy::parse(f), ArgumentError) << d;
  }
}
