#pragma once
// What the subcommands of zarrpp share: parsing arguments, the network options, opening what
// ARRAY and STORE name, and the directories a command creates.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <zarrpp/zarrpp.hpp>

namespace CLI {
class App;
}

namespace zarrpp::cli {

// ---- argument parsing helpers (common.cpp says more about each) ----
Shape parse_shape(const std::string& s, const char* what);
Domain parse_domain(const std::string& s);
std::string compressor_forms();
std::optional<codec::Any> parse_compressor(const std::string& s);
std::vector<codec::Any> compressors_of(const std::string& s);
Json scalar_json(const std::string& v);
// A value typed on the command line in the JSON form the data type's fill value takes: text as
// typed for string and U<n>, the typed bytes for S<n>, else scalar_json.
Json cli_value_json(const std::string& v, const DataType& t);
NDArray scalar_array(const std::string& v, const DataType& t, const std::string& what);
std::string one_line(std::string_view m);
std::size_t parse_axis(const std::string& text, std::size_t ndim);
// get's and set's --coords and --oindex: how their SELECTION is read.
void add_selection_flags(CLI::App& sub, bool& coords, bool& oindex);
// SELECTION planned as Python's z[...] plans it (zarrpp::plan_index), or as z.oindex[...] with
// `oindex`; `coords`: indices are coordinates of the domain.
IndexPlan plan_selection(const Selection& sel, const Array& z, bool oindex, bool coords);

// The bytes of the elements a selection planned with plan_selection reads or writes (0 when the
// reads are not the result's: index arrays read a box, blocks stored objects): progress totals.
std::uint64_t selection_bytes(const Array& z, const IndexPlan& plan);

// The codecs of an array on one line, as `info` and `tree` show them.
std::string codecs_summary(const ArrayMetadata& m);

// --timeout, --connect-timeout, ... on the app itself: they apply to every URL open_dir opens.
void add_network_options(CLI::App& app);

// ---- opening ARRAY and STORE ----
// What a command does with a store it opens: reading takes no lock and creates nothing (a zip file
// is opened read-only); writing changes what is there; creating may make the folder or zip file.
enum class Use { read, write, create };
StorePtr open_dir(const std::string& dir, Use use);
// Writes what the command changed in the zip files open_dir opened into them (ZipStore::close);
// StoreError naming each that failed (its changes kept beside it). After a command that `failed`,
// an archive it made and left empty is removed again (with the folders made for it).
void close_zip_stores(bool failed);
bool holds_node(const std::string& where);
Array open_array_at(const std::string& typed, Use use);

// Directories a command creates for a local ARRAY: removed again (when still empty) if the command
// fails, so a failed create or copy leaves nothing behind.
class NewDirs {
 public:
  explicit NewDirs(const std::string& where);
  NewDirs(const NewDirs&) = delete;
  NewDirs& operator=(const NewDirs&) = delete;
  ~NewDirs();
  void keep() { kept_ = true; }

 private:
  std::vector<std::filesystem::path> missing_;
  bool kept_ = false;
};

}  // namespace zarrpp::cli
