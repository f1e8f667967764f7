// The one data-type table (src/core/dtype_table.hpp): every spelling of the shared table
// (tests/data/dtype_spellings.json, which Python and the CLI run too) means one type, and every
// row's names in every form read back as the type they were written from.
#include <gtest/gtest.h>

#include <fstream>

#include "common.hpp"
#include "core/dtype_table.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;
using zarrpp::test::expect_throw_with;

namespace {

Json spellings() {
  std::ifstream in(std::string(ZARRPP_TEST_DATA_DIR) + "/dtype_spellings.json");
  EXPECT_TRUE(in) << "tests/data/dtype_spellings.json";
  return Json::parse(in);
}

// One type of each row: a width, unit or fields where the row's family needs them.
DataType sample_of(DataType::Id id) {
  using Id = DataType::Id;
  switch (id) {
    case Id::raw:
      return DataType::raw(24);
    case Id::fixed_utf32:
      return DataType::fixed_utf32(7);
    case Id::fixed_bytes:
      return DataType::fixed_bytes(5);
    case Id::raw_bytes:
      return DataType::raw_bytes(3);
    case Id::datetime64:
      return DataType::datetime64("ms", 10);
    case Id::timedelta64:
      return DataType::timedelta64("D");
    case Id::structured:
      return DataType::structured({{"a", DataType::int16, {}, 0}, {"b", DataType::fixed_bytes(2), {}, 0}});
    default:
      return DataType(id);
  }
}

}  // namespace

TEST(DataTypes, SpellingsFollowTheSharedTable) {
  const Json table = spellings();
  ASSERT_GT(table["accepted"].size(), 40U);
  for (const auto& row : table["accepted"]) {
    const auto spelling = row["spelling"].get<std::string>();
    const NumpyType t = numpy_type_from_user(spelling);
    EXPECT_EQ(t.type.name(), row["name"].get<std::string>()) << spelling;
    EXPECT_EQ(t.big_endian, row["big_endian"].get<bool>()) << spelling;
    if (row["big_endian"].get<bool>()) {
      expect_throw_with<ArgumentError>([&] { data_type_from_user(spelling); }, {"big-endian"}, spelling);
    } else {
      EXPECT_EQ(data_type_from_user(spelling), t.type) << spelling;
    }
  }
  for (const auto& row : table["refused"]) {
    const auto spelling = row["spelling"].get<std::string>();
    expect_throw_with<ArgumentError>([&] { numpy_type_from_user(spelling); }, {row["words"].get<std::string>()},
                                     spelling);
  }
}

TEST(DataTypes, EveryRowsNamesReadBackAsItsType) {
  for (const auto& row : dtype_table::rows) {
    const DataType t = sample_of(row.id);
    SCOPED_TRACE(t.name());
    EXPECT_EQ(t.id(), row.id);
    EXPECT_EQ(t.kind(), row.kind);
    if (t.kind() != DataKind::Struct) {  // its name is its descr, read by numpy_type_from_user below
      EXPECT_EQ(DataType::parse(t.name()), t);
    }
    for (const bool big : {false, true}) {
      if (t.kind() == DataKind::Struct) continue;  // NumPy states it by its descr, below
      const NumpyType n = numpy_type_from_v2(t.numpy_str(big));
      // |O is either variable-length type (the codec says which); |V<n> is r<8n> too.
      EXPECT_TRUE(n.type.holds_same_elements(t.is_vlen() ? DataType::string_t : t)) << t.numpy_str(big);
      EXPECT_EQ(n.big_endian, big && t.component_size() > 1);
      if (!t.is_vlen()) {  // a user's O is refused
        EXPECT_EQ(parse_numpy_spelling(t.numpy_str(big)).type, n.type);
      }
    }
    if (t.kind() == DataKind::Struct) {
      EXPECT_EQ(numpy_type_from_user(t.name()).type, t);
    }
    const Json v3 = data_type_to_json(t);
    EXPECT_EQ(data_type_from_json(v3), t) << v3.dump();
    const std::string v3_name = v3.is_string() ? v3.get<std::string>() : v3["name"].get<std::string>();
    if (row.config == dtype_table::Config::bits_in_name) {
      EXPECT_TRUE(v3_name.starts_with(row.zarr_name));
    } else {
      EXPECT_EQ(v3_name, row.zarr_name);
    }
    EXPECT_EQ(auto_item_size(t), t.is_vlen() ? 1U : t.size());
  }
}

TEST(DataTypes, ZarrNamesAreNotNumpysAndTheOtherWayRound) {
  // A configured type's NumPy display name is no Zarr v3 data_type; a Zarr extension name is no
  // NumPy spelling a user types.
  for (const char* numpy_name : {"U12", "S5", "V3", "datetime64[ns]"})
    expect_throw_with<MetadataError>([&] { data_type_from_json(Json(numpy_name)); }, {"unknown or unsupported"},
                                     numpy_name);
  for (const char* zarr_name : {"fixed_length_utf32", "null_terminated_bytes", "numpy.datetime64", "struct"})
    expect_throw_with<ArgumentError>([&] { DataType::from_user(zarr_name); }, {"unknown data type"}, zarr_name);
}
