// Zarr v2 -> v3 conversion. Every v2 chain zarrpp reads has a v3 equivalent (numcodecs filters
// and compressors under their zarr-python 3 names), every data type but a structured one with a
// subarray field (refused for the whole tree before anything is written), and the "v2" chunk key
// encoding keeps the keys, so no chunk is rewritten: in place, zarr.json is written beside the v2
// documents, which are removed only after it (an interrupted conversion opens as v3, and
// converting again finishes it); to another place, the chunks are copied byte for byte before
// zarr.json.
#include "zarrpp/array/convert.hpp"

#include "engine.hpp"
#include "node.hpp"
#include "zarrpp/array/group.hpp"

namespace zarrpp {

namespace {

// xarray reads a v2 array's fill value as the variable's missing value (_FillValue), but a v3
// array's from the _FillValue attribute only. A variable xarray wrote (it has _ARRAY_DIMENSIONS)
// with a fill value and no _FillValue attribute keeps its missing values through conversion only
// with that attribute, in xarray's encoding. Types that encoding has no form for are noted: times
// (xarray shows their v2 fill value as an attribute without masking with it) and text (U, S,
// string, bytes: xarray masks with it on v2, and cannot on v3).
void keep_xarray_missing_value(const ArrayMetadata& v2, ArrayMetadata& m, std::vector<std::string>* notes,
                               const std::string& shown) {
  const auto& stated = v2.fill_value.v2_stated;
  if (!v2.attributes.contains("_ARRAY_DIMENSIONS") || v2.attributes.contains("_FillValue") ||
      (stated && stated->is_null()))
    return;
  if (stated) {  // an object array's 0: xarray masks it, a v3 string array cannot hold it
    if (notes)
      notes->push_back(shown + ": xarray reads its v2 fill value " + stated->dump() +
                       " as the missing value; after conversion xarray reads those elements as empty (xarray's v3 "
                       "_FillValue encoding has no form for text)");
    return;
  }
  if (const auto attr = xarray_fill_attribute(v2.fill_value.bytes, v2.data_type)) {
    m.attributes["_FillValue"] = *attr;
    if (notes)
      notes->push_back(shown + ": its fill value is xarray's missing value, kept as the attribute _FillValue " +
                       attr->dump() + " (xarray reads a v3 array's missing value from there)");
  } else if (notes && v2.data_type.kind() == DataKind::Time) {
    notes->push_back(shown + ": xarray shows its v2 fill value " +
                     json_text(fill_value_to_json(v2.fill_value.bytes, v2.data_type)) +
                     " as the attribute _FillValue (without masking " + v2.data_type.name() +
                     " values with it); xarray's v3 encoding has no form for that type, so after conversion the "
                     "attribute is not shown (the values read the same)");
  } else if (notes) {
    notes->push_back(shown + ": xarray reads its v2 fill value " +
                     json_text(fill_value_to_json(v2.fill_value.bytes, v2.data_type)) +
                     " as missing, but xarray's v3 _FillValue encoding has no form for " + v2.data_type.name() +
                     ": after conversion xarray reads those elements as that value, not as missing");
  }
}

}  // namespace

ArrayMetadata v3_metadata_of(const ArrayMetadata& v2, std::vector<std::string>* notes, const std::string& shown) {
  ArrayMetadata m = v2;
  if (m.zarr_format != 2) return m;
  m.zarr_format = 3;
  if (const auto& stated = v2.fill_value.v2_stated; stated && notes) {
    const std::string became = fill_value_to_json(m.fill_value.bytes, m.data_type).dump();
    if (v2.missing_element())  // an object array's 0 / null: its missing elements change
      notes->push_back(shown + ": fill_value " + stated->dump() + " became " + became + ": elements no chunk holds " +
                       "read as " + stated->dump() + " before (as zarr-python 2 reads them) and as " + became +
                       " after (a v3 " + m.data_type.name() + " array holds only " + m.data_type.name() + " values)");
    else
      notes->push_back(shown + ": fill_value " + stated->dump() + (stated->is_null() ? " (no fill value)" : "") +
                       " became " + became + ", which missing chunks read as (zarrpp read them so already)");
  }
  keep_xarray_missing_value(v2, m, notes, shown);
  m.fill_value.v2_stated.reset();
  m.v2 = ArrayMetadata::V2{};
  if (m.attributes.contains("_ARRAY_DIMENSIONS")) {
    const auto& d = m.attributes["_ARRAY_DIMENSIONS"];
    bool ok = d.is_array() && d.size() == m.rank();
    if (ok)
      for (const auto& n : d) ok = ok && n.is_string();
    if (ok) {
      std::vector<std::optional<std::string>> names;
      for (const auto& n : d) names.emplace_back(n.get<std::string>());
      m.dimension_names = names;
      m.attributes.erase("_ARRAY_DIMENSIONS");
    } else if (notes) {
      notes->push_back(shown + ": _ARRAY_DIMENSIONS " + d.dump() +
                       " is not one name per dimension; kept as an attribute");
    }
  }
  m.validate_for_write();
  return m;
}

namespace {

std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : b.empty() ? a : a + "/" + b; }

// The children of a group in either state (a listing store, or the consolidated metadata).
std::vector<Group::Child> members(const StorePtr& store, const std::string& path) {
  return Group::open(store, path).children();
}

// Every node of the tree must be nameable in v3, and every v2 array's data type statable there
// (a structured type with a subarray field is not): checked before anything is written.
void check_v3_names(const StorePtr& store, const std::string& path) {
  auto d = node::read_doc(*store, path, true);
  if (d && d->format == 2 && d->type == NodeType::Array) {
    try {
      data_type_to_json(node::read_array(*store, path).meta.data_type);
    } catch (const UnsupportedError& e) {
      throw UnsupportedError("cannot convert '" + node::shown(path) + "': " + e.what() + "; nothing was converted");
    }
  }
  if (!d || d->type != NodeType::Group) return;
  for (const auto& c : members(store, path)) {
    try {
      validate_v3_node_path(c.name);
    } catch (const MetadataError& e) {
      throw MetadataError("cannot convert '" + node::shown(join(path, c.name)) + "': " + e.what() +
                          "; rename it first (zarr-python 2: group.move), nothing was converted");
    }
    check_v3_names(store, join(path, c.name));
  }
}

void convert_in_place(const StorePtr& store, const std::string& path, ConvertReport& rep) {
  auto d = node::read_doc(*store, path, true);
  if (!d) throw NotFoundError("no node at '" + node::shown(path) + "' in " + store->describe() + node::absent(*store));
  const bool leftovers = d->format == 3 && node::has_v2_documents(*store, path);
  if (d->type == NodeType::Group) {
    for (const auto& c : members(store, path)) {
      if (!c.error.empty()) throw MetadataError("cannot convert member '" + join(path, c.name) + "': " + c.error);
      convert_in_place(store, join(path, c.name), rep);
    }
  }
  if (d->format == 3 && !leftovers) {
    rep.notes.push_back(node::shown(path) + ": already Zarr v3");
    return;
  }
  if (d->format == 2) {
    if (d->type == NodeType::Array) {
      const auto v2 = node::read_array(*store, path).meta;  // the one reader (the key layout included)
      const auto m = v3_metadata_of(v2, &rep.notes, node::shown(path));
      make_snapshot(m, std::nullopt);  // validated before anything is written
      store->set(node::meta_key(path), node::to_bytes(m.dump()));
    } else {
      GroupMetadata g;
      const Json a = node::v2_attributes_of(*store, path, *d);
      if (!a.is_null()) g.attributes = a;
      store->set(node::meta_key(path), node::to_bytes(g.dump()));
    }
  } else {
    rep.notes.push_back(node::shown(path) + ": finished an interrupted conversion (zarr.json was already written)");
  }
  // zarr.json is in place: the v2 documents go (.zmetadata too: it would describe v2 nodes that
  // are no longer there).
  for (const char* name : {node::kZattrs, node::kZmetadata, node::kZarray, node::kZgroup})
    store->erase(node::key_in(path, name));
  ++rep.nodes;
}

void convert_copy(const StorePtr& src, const std::string& sp, const StorePtr& dst, const std::string& dp,
                  ConvertReport& rep, std::vector<std::string>& written) {
  auto d = node::read_doc(*src, sp, true);
  if (!d) throw NotFoundError("no node at '" + node::shown(sp) + "' in " + src->describe() + node::absent(*src));
  if (d->type == NodeType::Group) {
    GroupMetadata g;
    if (d->format == 2) {
      const Json a = node::v2_attributes_of(*src, sp, *d);
      if (!a.is_null()) g.attributes = a;
    } else {
      g = GroupMetadata::from_json(d->json);
    }
    for (const auto& c : members(src, sp)) {
      if (!c.error.empty()) throw MetadataError("cannot convert member '" + join(sp, c.name) + "': " + c.error);
      convert_copy(src, join(sp, c.name), dst, join(dp, c.name), rep, written);
    }
    dst->set(node::meta_key(dp), node::to_bytes(g.dump()));
    written.push_back(node::meta_key(dp));
    ++rep.nodes;
    return;
  }
  const auto a = Array::open(src, sp);
  const auto m = v3_metadata_of(a.metadata(), &rep.notes, node::shown(sp));
  make_snapshot(m, std::nullopt);
  // Chunks byte for byte (the keys relative to the node are the same), then zarr.json.
  const std::string sprefix = node::prefix_of(sp), dprefix = node::prefix_of(dp);
  for (const auto& key : a.stored_chunk_keys()) {
    auto b = src->get(key);
    if (!b) continue;  // removed meanwhile: it reads as fill either way
    written.push_back(dprefix + key.substr(sprefix.size()));
    dst->set(written.back(), *b);
    ++rep.chunks_copied;
  }
  written.push_back(node::meta_key(dp));
  dst->set(node::meta_key(dp), node::to_bytes(m.dump()));
  ++rep.nodes;
}

}  // namespace

ConvertReport convert_to_v3(const StorePtr& store, const std::string& path_in) {
  if (!store) throw ArgumentError("convert_to_v3: no store given");
  const std::string path = normalize_node_path(path_in);
  validate_v3_node_path(path);
  check_v3_names(store, path);
  ConvertReport rep;
  convert_in_place(store, path, rep);
  // Consolidated metadata above the node no longer describes it.
  node::refresh_consolidated(*store, path, /*replaced_format=*/2);
  return rep;
}

ConvertReport convert_to_v3(const StorePtr& src, const std::string& src_path, const StorePtr& dst,
                            const std::string& dst_path_in, bool overwrite) {
  if (!src || !dst) throw ArgumentError("convert_to_v3: no store given");
  const std::string sp = normalize_node_path(src_path), dp = normalize_node_path(dst_path_in);
  const std::string a = sp.empty() ? src->location() : src->location() + "/" + sp;
  const std::string b = dp.empty() ? dst->location() : dst->location() + "/" + dp;
  // By what the stores say the folders are: a bind mount or symlink of the source is the source.
  if (node::overlap(*src, sp, *dst, dp) != node::Overlap::none)
    throw ArgumentError("convert: the destination '" + b + "' overlaps the source '" + a +
                        "'; convert in place instead (no DST)");
  if (!node::read_doc(*src, sp, true))
    throw NotFoundError("no node at '" + node::shown(sp) + "' in " + src->describe() + node::absent(*src));
  check_v3_names(src, sp);
  validate_v3_node_path(dp);
  const int replaced = node::prepare_create(*dst, dp, overwrite, nullptr, 3);
  ConvertReport rep;
  std::vector<std::string> written;
  try {
    convert_copy(src, sp, dst, dp, rep, written);
  } catch (...) {
    // What this conversion wrote goes again (newest first, so no chunk is left without its node).
    for (auto it = written.rbegin(); it != written.rend(); ++it) {
      try {
        dst->erase(*it);
      } catch (...) {
      }
    }
    node::prune_dirs_of(*dst, written, node::prefix_of(dp));
    throw;
  }
  // A hierarchy it was converted into lists it where it is consolidated.
  node::refresh_consolidated(*dst, dp, replaced);
  return rep;
}

}  // namespace zarrpp
