// zarrpp info: describe an array, as text or one JSON object.
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"

namespace zarrpp::cli {

namespace {

Json info_json(const Array& z) {
  const auto& m = z.metadata();
  Json j = Json::object();
  j["zarr_format"] = m.zarr_format;
  if (m.zarr_format == 2) {
    j["v2_dtype"] = m.v2.dtype;
    j["order"] = std::string(1, m.v2.order);
    if (const auto& stated = m.fill_value.v2_stated) {
      // .zarray states no fill value, or one zarrpp reads differently (an object array's 0).
      if (stated->is_null())
        j["v2_fill_value_null"] = true;
      else
        j["v2_fill_value"] = *stated;
    }
  } else if (const std::string pre = z.path().empty() ? "" : z.path() + "/";
             z.store()->exists(pre + ".zarray") || z.store()->exists(pre + ".zgroup")) {
    j["unfinished_conversion"] = true;
  }
  j["shape"] = z.shape();
  Json dom = Json::array();
  for (const auto& d : z.domain()) dom.push_back({d.inclusive_min, d.exclusive_max});
  j["domain"] = dom;
  j["data_type"] = z.dtype().name();
  j["chunk_grid"] = m.chunk_grid.to_json();
  // A rectilinear grid's chunks (or shards) are each dimension's sizes as zarr.json states them
  // (run-length pairs kept, so a grid of a billion chunks prints in a line), as --chunks takes them.
  const bool rect = z.rectilinear();
  const Json sizes = rect ? m.chunk_grid.to_json()["configuration"]["chunk_shapes"] : Json();
  j["chunks"] = rect && !z.sharded() ? sizes : Json(z.chunks());
  if (z.sharded()) j["shards"] = rect ? sizes : Json(*z.shards());
  // zarr-python 3's counts (docs/architecture.md's glossary): chunks are inner chunks when
  // sharded, and what is stored are shards then.
  // A store that cannot list (HTTP) cannot tell what is stored: null, never a guess.
  const bool listed = z.store()->capabilities().listing;
  j["chunks_total"] = z.nchunks();
  if (z.sharded()) {
    j["shards_total"] = z.nshards();
    j["shards_stored"] = listed ? Json(z.nshards_stored()) : Json(nullptr);
  } else {
    j["chunks_stored"] = listed ? Json(z.nshards_stored()) : Json(nullptr);
  }
  j["bytes_stored"] = listed ? Json(z.nbytes_stored()) : Json(nullptr);
  j["fill_value"] = z.fill_value_json();
  Json cs = Json::array();
  for (const auto& c : m.codecs) cs.push_back(c.to_json());
  j["codecs"] = cs;
  j["chunk_key_encoding"] = m.chunk_key_encoding.to_json();
  if (m.dimension_names) {
    Json dn = Json::array();
    for (const auto& n : *m.dimension_names) dn.push_back(n ? Json(*n) : Json(nullptr));
    j["dimension_names"] = dn;
  }
  j["attributes"] = z.attributes();
  return j;
}

// A stored count, or why there is none.
std::string stored_text(const Json& v) { return v.is_null() ? "unknown (the store cannot list its keys)" : v.dump(); }

void print_info(const Array& z) {
  const auto j = info_json(z);
  std::string dom;
  for (const auto& d : z.domain())
    dom += (dom.empty() ? "" : ", ") +
           ("[" + std::to_string(d.inclusive_min) + ", " + std::to_string(d.exclusive_max) + ")");
  const auto& m = z.metadata();
  std::cout
      << "Type          : Array\n"
      << "Zarr format   : " << m.zarr_format
      << (j.contains("unfinished_conversion")
              ? "  (v2 documents are still there: an interrupted conversion; run 'zarrpp convert' again to finish it)"
              : "")
      << "\n"
      << "Data type     : " << z.dtype().name()
      << (m.zarr_format == 2
              ? "  (v2 dtype " + (m.v2.dtype.is_string() ? m.v2.dtype.get<std::string>() : json_text(m.v2.dtype)) + ")"
              : "")
      << "\n"
      << "Shape         : " << shape_str(z.shape()) << "\n"
      << "Domain        : " << dom << "\n"
      << "Chunk grid    : " << z.metadata().chunk_grid.name() << " " << json_text(j["chunk_grid"]["configuration"])
      << "\n"
      << (z.rectilinear() && !z.sharded() ? "Chunk sizes   : " + json_text(j["chunks"])
                                          : "Chunk shape   : " + shape_str(z.chunks()))
      << "\n";
  if (z.sharded())
    std::cout << (z.rectilinear() ? "Shard sizes   : " + json_text(j["shards"])
                                  : "Shard shape   : " + shape_str(*z.shards()))
              << "\n";
  std::cout << "Fill value    : " << json_text(j["fill_value"]) << "\n"
            << "Codecs        : " << codecs_summary(z.metadata()) << "\n"
            << (z.sharded() ? "Shards stored : " + stored_text(j["shards_stored"]) + " / " + j["shards_total"].dump() +
                                  " (of " + j["chunks_total"].dump() + " chunks)"
                            : "Chunks stored : " + stored_text(j["chunks_stored"]) + " / " + j["chunks_total"].dump())
            << "\n"
            << "Bytes stored  : " << stored_text(j["bytes_stored"])
            << " (chunks and metadata, as zarr-python's nbytes_stored)\n";
  if (!z.attributes().empty()) std::cout << "Attributes    : " << json_text(z.attributes()) << "\n";
}

class InfoCommand final : public Command {
 public:
  void add(CLI::App& app) override {
    sub_ = app.add_subcommand("info", "Describe an array");
    sub_->add_option("ARRAY", array_, "The array: its directory or URL")->required();
    sub_->add_flag("--json", json_, "Print one JSON object");
  }

  void run() override {
    auto z = open_array_at(array_, Use::read);
    if (json_)
      std::cout << json_text(info_json(z)) << "\n";
    else
      print_info(z);
  }

 private:
  std::string array_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_info() { return std::make_unique<InfoCommand>(); }

}  // namespace zarrpp::cli
