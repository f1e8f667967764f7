// Zarr v2 <-> v3 conversion. Every v2 chain zarrpp reads has a v3 equivalent (numcodecs filters
// and compressors under their zarr-python 3 names), every data type but a structured one with a
// subarray field (refused for the whole tree before anything is written), and the "v2" chunk key
// encoding keeps the keys, so no chunk is rewritten: in place, zarr.json is written beside the v2
// documents, which are removed only after it (an interrupted conversion opens as v3, and
// converting again finishes it); to another place, the chunks are copied byte for byte before
// zarr.json. Back to v2 the same holds for every v3 array whose codecs, grid and fields v2 can state
// (refused by name for the whole tree otherwise); in place its chunk keys must be v2 keys already
// (a converted array's are), to another place chunks are copied under their v2 keys.
#include "zarrpp/hierarchy/convert.hpp"

#include "../array/engine.hpp"
#include "../node/node.hpp"
#include "zarrpp/codec/codec.hpp"
#include "zarrpp/hierarchy/group.hpp"

namespace zarrpp {

namespace {

// xarray reads a v2 array's fill value as the variable's missing value (_FillValue), but a v3
// array's from the _FillValue attribute only. A variable xarray wrote (it has _ARRAY_DIMENSIONS)
// with a fill value and no _FillValue attribute keeps its missing values through conversion only
// with that attribute (xarray_fill_attribute: xarray's encoding, or zarr.json's form for times,
// which xarray's v3 decoder has none for). Text, raw and structured types get none: noted.
void keep_xarray_missing_value(const ArrayMetadata& v2, ArrayMetadata& m, std::vector<std::string>* notes,
                               const std::string& shown) {
  const auto& stated = v2.fill_value.v2_stated;
  if (!v2.attributes.contains("_ARRAY_DIMENSIONS") || v2.attributes.contains("_FillValue") ||
      (stated && stated->is_null()))
    return;
  if (stated) return;  // an object array's 0: every chunk is stored (check_missing_elements), none reads it
  if (const auto attr = xarray_fill_attribute(v2.fill_value.bytes, v2.data_type)) {
    m.attributes["_FillValue"] = *attr;
    if (notes)
      notes->push_back(shown + ": its fill value is xarray's missing value, kept as the attribute _FillValue " +
                       attr->dump() + " (xarray reads a v3 array's missing value from there)");
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
    if (v2.missing_element())  // an object array's 0 / null: converted only when every chunk is stored
      notes->push_back(shown + ": fill_value " + stated->dump() + " became " + became + " (a v3 " + m.data_type.name() +
                       " array holds only " + m.data_type.name() +
                       " values); every chunk is stored, so no element reads it");
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

// A zarr-python 2 object array whose fill value is not of its type (0, null) reads that value
// where no chunk is stored; a v3 array holds only values of its type, so such an array converts
// only when every chunk is stored (then no element reads its fill value, and none changes).
void check_missing_elements(const Array& a) {
  const ArrayMetadata meta = a.metadata();
  const Json* missing = meta.missing_element();
  const std::int64_t stored = a.nshards_stored(), all = a.nshards();
  if (!missing || stored == all) return;
  const std::string type = a.dtype().name();
  throw UnsupportedError("cannot convert '" + node::shown(a.path()) + "': " + std::to_string(all - stored) + " of " +
                         std::to_string(all) + " chunks are not stored, and their elements read as " + missing->dump() +
                         " (its Zarr v2 fill value, as zarr-python 2 reads them), which a Zarr v3 " + type +
                         " array cannot hold; write every chunk first (e.g. its missing elements as \"\") to " +
                         "convert it; nothing was converted");
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
    check_missing_elements(Array::open(store, path));
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

// A conversion into another place: the destination must not overlap the source (by what the
// stores say the folders are: a bind mount or symlink of the source is the source), and the
// source must hold a node.
void check_copy_places(Store& src, const std::string& sp, Store& dst, const std::string& dp, bool overwrite) {
  const std::string a = sp.empty() ? src.location() : src.location() + "/" + sp;
  const std::string b = dp.empty() ? dst.location() : dst.location() + "/" + dp;
  // A node there that overwrite will remove first: the stores are also asked by what they hold.
  const bool replacing = overwrite && node::read_doc(dst, dp, false);
  if (node::overlap(src, sp, dst, dp) != node::Overlap::none ||
      (replacing && node::probe_overlap(src, sp, dst, dp) != node::Overlap::none))
    throw ArgumentError("convert: the destination '" + b + "' overlaps the source '" + a +
                        "'; convert in place instead (no DST)");
  if (!node::read_doc(src, sp, true))
    throw NotFoundError("no node at '" + node::shown(sp) + "' in " + src.describe() + node::absent(src));
}

// A conversion into another place: `walk(report, written)` writes the converted nodes, listing
// the keys it wrote. On failure they go again (newest first, so no chunk is left without its
// node); on success the hierarchy converted into lists the node where it is consolidated.
template <class Walk>
ConvertReport into_another_place(Store& dst, const std::string& dp, int replaced, Walk&& walk) {
  ConvertReport rep;
  std::vector<std::string> written;
  try {
    walk(rep, written);
  } catch (...) {
    for (auto it = written.rbegin(); it != written.rend(); ++it) {
      try {
        dst.erase(*it);
      } catch (...) {
      }
    }
    node::prune_dirs_of(dst, written, node::prefix_of(dp));
    if (replaced == 0) throw;
    const std::string gone = "; nothing of the conversion is left at '" + node::shown(dp) +
                             "', and the node that was there before is gone (overwrite replaced it first)";
    try {
      throw;
    } catch (const Error& e) {
      throw_like(e, e.what() + gone);
    }
  }
  node::refresh_consolidated(dst, dp, replaced, /*subtree=*/true);
  return rep;
}

// An in-place conversion that fails part way says where it stopped: nodes are converted children
// first, each read as before throughout (zarr.json, which readers prefer, is written first when
// converting to v3, and removed last when converting to v2).
template <class Walk>
void in_place(int format, ConvertReport& rep, Walk&& walk) {
  try {
    walk();
  } catch (const Error& e) {
    if (rep.nodes == 0) throw;
    throw_like(e, std::string(e.what()) + "; the conversion stopped part way: " + std::to_string(rep.nodes) +
                      " node(s) are Zarr v" + std::to_string(format) +
                      " now, the others as they were (each reads as before); run it again to finish");
  }
}

// The entries zarr-python 3's consolidated_metadata lists for the v3 nodes converted from the
// members of `from` into `to`, keys relative to the consolidated group (a group's own list left
// empty, as zarr-python 3 writes it).
void v3_entries(const StorePtr& src, const std::string& from, const StorePtr& dst, const std::string& to,
                const std::string& rel, Json& md) {
  for (const auto& c : members(src, from)) {
    const std::string r = join(rel, c.name);
    const auto d = node::read_doc(*dst, join(to, c.name));
    if (!d || d->format != 3) continue;
    Json doc = d->json;
    if (doc.contains("consolidated_metadata") && doc["consolidated_metadata"].is_object())
      doc["consolidated_metadata"]["metadata"] = Json::object();
    md[r] = doc;
    if (d->type == NodeType::Group) v3_entries(src, join(from, c.name), dst, join(to, c.name), r, md);
  }
}

// A v2 group that was consolidated (.zmetadata) stays so in v3: zarr-python 3's inline
// consolidated_metadata in its zarr.json, listing the (converted) nodes under it.
void keep_consolidated(const StorePtr& src, const std::string& from, const StorePtr& dst, const std::string& to,
                       GroupMetadata& g) {
  if (!src->exists(node::key_in(from, node::kZmetadata))) return;
  Json md = Json::object();
  v3_entries(src, from, dst, to, "", md);
  g.consolidated = Json::object({{"kind", "inline"}, {"must_understand", false}, {"metadata", md}});
  g.has_consolidated = true;
}

// An in-place conversion of a node holds the node's lock, the one growth holds, so a growth or a
// shrink of the array lands wholly before it (and is converted) or after it (and finds the other
// format's document, and stops): never read by the conversion and then lost.
std::unique_ptr<StoreLock> lock_node(Store& store, const std::string& path) {
  return store.capabilities().locking ? store.lock(node::meta_key(path)) : nullptr;
}

// Removes the old format's document `key` only if it is still `version` (what the conversion
// read): a writer of attributes, who takes no lock, may have changed it meanwhile. False when it
// changed; the caller converts again from what is there now.
bool erase_if_unchanged(Store& store, const std::string& key, const std::optional<Version>& version) {
  if (!store.capabilities().conditional_erase) {
    store.erase(key);
    return true;
  }
  return store.erase(key, WriteOptions::if_equal(version)) || (!version && !store.exists(key));
}

std::optional<Version> version_of(Store& store, const std::string& key) {
  const auto v = store.get_versioned(key, ByteRange::all(), node::kMaxMetadataBytes);
  return v ? std::optional<Version>(v->version) : std::nullopt;
}

void convert_in_place(const StorePtr& store, const std::string& path, ConvertReport& rep) {
  const auto held = lock_node(*store, path);
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
  const std::string zattrs = node::key_in(path, node::kZattrs);
  for (int attempt = 0;; ++attempt) {
    // .zattrs as it is when zarr.json is made from it: removed below only if still so.
    const auto attrs_version = version_of(*store, zattrs);
    if (d->format == 2) {
      if (d->type == NodeType::Array) {
        const auto v2 = node::read_array(*store, path).meta;  // the one reader (the key layout included)
        const auto m = v3_metadata_of(v2, attempt == 0 ? &rep.notes : nullptr, node::shown(path));
        make_snapshot(m, std::nullopt);  // validated before anything is written
        store->set(node::meta_key(path), node::to_bytes(m.dump()));
      } else {
        GroupMetadata g;
        const Json a = node::v2_attributes_of(*store, path, *d);
        if (!a.is_null()) g.attributes = a;
        keep_consolidated(store, path, store, path, g);
        store->set(node::meta_key(path), node::to_bytes(g.dump()));
      }
    } else if (attempt == 0) {
      rep.notes.push_back(node::shown(path) + ": finished an interrupted conversion (zarr.json was already written)");
    }
    const auto written = version_of(*store, node::meta_key(path));
    if (erase_if_unchanged(*store, zattrs, attrs_version)) break;
    // .zattrs changed after zarr.json was made from it: take that zarr.json back (unless a writer
    // changed it too) and convert again from the v2 documents as they are now.
    if (d->format != 2 || attempt == 20 || !erase_if_unchanged(*store, node::meta_key(path), written))
      throw ConflictError("convert '" + node::shown(path) +
                          "': its attributes changed while it was converted (.zattrs, and zarr.json once written); "
                          "both are kept and zarr.json is read; run the conversion again to finish");
    d = node::read_doc(*store, path, true);
    if (!d || d->format != 2) throw NotFoundError("convert '" + node::shown(path) + "': its .zarray went meanwhile");
  }
  // zarr.json is in place: the other v2 documents go (.zmetadata too: it would describe v2 nodes
  // that are no longer there).
  for (const char* name : {node::kZmetadata, node::kZarray, node::kZgroup}) store->erase(node::key_in(path, name));
  ++rep.nodes;
}

void convert_copy(const StorePtr& src, const std::string& sp, const StorePtr& dst, const std::string& dp,
                  ConvertReport& rep, std::vector<std::string>& written, const ProgressCallback& progress) {
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
      convert_copy(src, join(sp, c.name), dst, join(dp, c.name), rep, written, progress);
    }
    if (d->format == 2) keep_consolidated(src, sp, dst, dp, g);
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
    if (progress) progress(ProgressStep{.objects = 1, .bytes = b->size()});
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
  in_place(3, rep, [&] { convert_in_place(store, path, rep); });
  // Consolidated metadata above the node no longer describes it.
  node::refresh_consolidated(*store, path, /*replaced_format=*/2, /*subtree=*/true);
  return rep;
}

ConvertReport convert_to_v3(const StorePtr& src, const std::string& src_path, const StorePtr& dst,
                            const std::string& dst_path_in, bool overwrite, const ProgressCallback& progress) {
  if (!src || !dst) throw ArgumentError("convert_to_v3: no store given");
  const std::string sp = normalize_node_path(src_path), dp = normalize_node_path(dst_path_in);
  check_copy_places(*src, sp, *dst, dp, overwrite);
  check_v3_names(src, sp);
  validate_v3_node_path(dp);
  const int replaced = node::prepare_create(*dst, dp, overwrite, nullptr, 3);
  return into_another_place(*dst, dp, replaced, [&](ConvertReport& rep, std::vector<std::string>& written) {
    convert_copy(src, sp, dst, dp, rep, written, progress);
  });
}

// ---- back to Zarr v2 -------------------------------------------------------------------------

namespace {

// xarray reads a v2 array's missing value from its fill value, whatever the attribute _FillValue
// says: the attribute (which conversion to v3 adds) goes when it states the fill value.
void drop_xarray_missing_value(ArrayMetadata& m, std::vector<std::string>* notes, const std::string& shown) {
  if (!m.attributes.contains("_ARRAY_DIMENSIONS") || !m.attributes.contains("_FillValue")) return;
  const Json attr = m.attributes["_FillValue"];
  const auto same = xarray_fill_attribute(m.fill_value.bytes, m.data_type);
  if (same && same->dump() == attr.dump()) {
    m.attributes.erase("_FillValue");
    if (notes)
      notes->push_back(shown + ": the attribute _FillValue " + attr.dump() +
                       " states its fill value, where xarray reads a v2 array's missing value from; it was removed");
  } else if (notes) {
    notes->push_back(shown + ": xarray reads a v2 array's missing value from its fill value " +
                     json_text(fill_value_to_json(m.fill_value.bytes, m.data_type)) +
                     ", not from the attribute _FillValue " + attr.dump() +
                     " (kept): after conversion xarray masks the fill value instead");
  }
}

// An xarray variable (it has dimension names) without the attribute _FillValue has no missing
// value in v3, but xarray masks a v2 array's fill value: .zarray states none (null), as xarray
// writes such variables, when every chunk is stored (so no element reads the fill value); else
// the fill value stays (missing chunks read as it) and the note says what xarray will mask.
void keep_no_missing_value(const ArrayMetadata& v3, ArrayMetadata& m, bool every_chunk_stored,
                           std::vector<std::string>* notes, const std::string& shown) {
  if (!m.attributes.contains("_ARRAY_DIMENSIONS") || v3.attributes.contains("_FillValue") || m.fill_value.v2_stated)
    return;
  const std::string fill = json_text(fill_value_to_json(m.fill_value.bytes, m.data_type));
  if (every_chunk_stored) {
    m.fill_value.v2_stated = Json(nullptr);
    if (notes)
      notes->push_back(shown + ": fill_value null (no fill value), as xarray writes a variable without a missing " +
                       "value: xarray would read elements equal to its fill value " + fill +
                       " as missing in v2 (every chunk is stored, so no element reads the fill value)");
  } else if (notes) {
    notes->push_back(shown + ": xarray reads a v2 array's fill value as missing: after conversion elements equal to " +
                     fill + " read as missing in xarray (the variable has no _FillValue attribute, so they did not " +
                     "in v3); the fill value stays, as chunks that are not stored read as it");
  }
}

// What else changes: a bytes array's fill value (v2 states none), an _ARRAY_DIMENSIONS attribute
// that dimension_names replace.
void note_v2_changes(const ArrayMetadata& v3, const ArrayMetadata& m, bool every_chunk_stored,
                     std::vector<std::string>* notes, const std::string& shown) {
  if (!notes) return;
  if (v3.data_type == DataType::bytes_t && !every_chunk_stored)
    notes->push_back(shown + ": elements no chunk holds read as None after conversion (b\"\" before): Zarr v2 " +
                     "states no fill value for bytes, which zarr-python 2 reads so");
  if (v3.dimension_names && v3.attributes.contains("_ARRAY_DIMENSIONS") &&
      v3.attributes["_ARRAY_DIMENSIONS"] != m.attributes["_ARRAY_DIMENSIONS"])
    notes->push_back(shown + ": the attribute _ARRAY_DIMENSIONS " + v3.attributes["_ARRAY_DIMENSIONS"].dump() +
                     " was replaced by its dimension_names " + m.attributes["_ARRAY_DIMENSIONS"].dump());
}

}  // namespace

ArrayMetadata v2_metadata_of(const ArrayMetadata& v3, bool every_chunk_stored, std::vector<std::string>* notes,
                             const std::string& shown) {
  if (v3.zarr_format == 2) return v3;
  const std::string why = "cannot convert '" + shown + "' to Zarr v2: ";
  if (v3.chunk_grid.kind != ChunkGridMetadata::Kind::Regular)
    throw UnsupportedError(why + "its chunk grid is " + v3.chunk_grid.name() +
                           (v3.chunk_grid.rectilinear() ? " (chunks listed by size; a lower bound or origin too, "
                                                          "when bounded)"
                                                        : " (a lower bound or origin, as after a prepend)") +
                           ", " +
                           "which Zarr v2 cannot state; switch it to regular first (zarrpp convert ARRAY --grid " +
                           "regular, when its chunks have one size and its domain starts at 0; else zarrpp copy "
                           "ARRAY NEW --grid regular)");
  ArrayMetadata m;
  try {
    // The codec layer's v2 form of the chain decodes the stored chunks as the chain does.
    m = codec::as_v2(v3);
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(why + e.what());
  }
  m.chunk_key_encoding = ChunkKeyEncoding::v2(v3.chunk_key_encoding.separator);
  drop_xarray_missing_value(m, notes, shown);
  keep_no_missing_value(v3, m, every_chunk_stored, notes, shown);
  note_v2_changes(v3, m, every_chunk_stored, notes, shown);
  return m;
}

namespace {

const std::string kNothing = "; nothing was converted";

// Every v3 node of the tree must have a v2 form (and, in place, an array its v2 chunk keys
// already): checked before anything is written.
void check_v2_form(const StorePtr& store, const std::string& path, bool in_place) {
  const auto d = node::read_doc(*store, path, true);
  if (!d) return;
  const std::string shown = node::shown(path);
  if (d->format == 3 && d->type == NodeType::Array) {
    const auto a = node::read_array(*store, path).meta;
    try {
      v2_metadata_of(a, false, nullptr, shown);
    } catch (const UnsupportedError& e) {
      throw UnsupportedError(e.what() + kNothing);
    }
    if (in_place && a.chunk_key_encoding.kind != ChunkKeyEncoding::Kind::V2)
      throw UnsupportedError("cannot convert '" + shown + "' to Zarr v2 in place: its chunk keys (\"" +
                             a.chunk_key_encoding.encode(std::vector<std::int64_t>(a.rank(), 0)) +
                             "\") are not v2 keys; convert it into another place, where its chunks are copied under v2 "
                             "keys" +
                             kNothing);
  }
  if (d->type != NodeType::Group) return;
  if (d->format == 3) {
    const auto g = GroupMetadata::from_json(d->json);
    if (!g.extra_fields.empty())
      throw UnsupportedError("cannot convert '" + shown +
                             "' to Zarr v2: Zarr v2 cannot store the extra zarr.json fields " + g.extra_fields.dump() +
                             kNothing);
  }
  for (const auto& c : members(store, path)) {
    if (!c.error.empty())
      throw MetadataError("cannot convert member '" + join(path, c.name) + "': " + c.error + kNothing);
    check_v2_form(store, join(path, c.name), in_place);
  }
}

// A v2 node's documents: .zattrs (removed when there are no attributes), then `doc`, which makes
// the node. Keys written go to `written` (when given).
void write_v2_documents(Store& store, const std::string& path, const Json& attributes, const char* name,
                        const std::string& doc, std::vector<std::string>* written) {
  const std::string attrs = node::key_in(path, node::kZattrs);
  if (!attributes.empty()) {
    if (written) written->push_back(attrs);
    store.set(attrs, node::to_bytes(dump_v2_attributes(attributes)));
  } else if (!written) {
    store.erase(attrs);
  }
  if (written) written->push_back(node::key_in(path, name));
  store.set(node::key_in(path, name), node::to_bytes(doc));
}

// The .zgroup text and attributes of a group in either format; whether it was consolidated.
struct V2Group {
  Json attributes = Json::object();
  std::string doc;
  bool consolidated = false;
};
V2Group v2_group_of(Store& store, const std::string& path, const node::Doc& d) {
  V2Group v;
  GroupMetadata g;
  if (d.format == 3) {
    g = GroupMetadata::from_json(d.json);
    v.consolidated = g.has_consolidated && !g.consolidated.is_null();
  } else {
    const Json a = node::v2_attributes_of(store, path, d);
    if (!a.is_null()) g.attributes = a;
    v.consolidated = store.exists(node::key_in(path, node::kZmetadata));
  }
  v.attributes = g.attributes;
  g.zarr_format = 2;
  g.extra_fields = Json::object();
  v.doc = g.dump();
  return v;
}

// The entries of a v2 .zmetadata for the v2 node converted from `from` into `to`, and for those
// under it, keys relative to the consolidated group.
void consolidated_entries(const StorePtr& src, const std::string& from, const StorePtr& dst, const std::string& to,
                          const std::string& rel, Json& md) {
  const auto d = node::read_doc(*dst, to);
  if (!d || d->format != 2) return;
  md[rel + "/" + (d->type == NodeType::Array ? node::kZarray : node::kZgroup)] = d->json;
  const Json a = node::read_v2_attributes(*dst, to);
  if (!a.is_null()) md[rel + "/" + node::kZattrs] = a;
  if (d->type == NodeType::Group)
    for (const auto& c : members(src, from))
      consolidated_entries(src, join(from, c.name), dst, join(to, c.name), rel + "/" + c.name, md);
}

// A consolidated group stays consolidated: its .zmetadata as zarr-python 2 writes it, listing the
// group (`g`, whose documents may not be written yet) and every node converted under it.
void write_v2_consolidated(const StorePtr& src, const std::string& from, const StorePtr& dst, const std::string& to,
                           const V2Group& g, std::vector<std::string>* written) {
  Json md = Json::object();
  md[node::kZgroup] = Json::parse(g.doc);
  if (!g.attributes.empty()) md[node::kZattrs] = g.attributes;
  for (const auto& c : members(src, from))
    consolidated_entries(src, join(from, c.name), dst, join(to, c.name), c.name, md);
  const std::string key = node::key_in(to, node::kZmetadata);
  if (written) written->push_back(key);
  dst->set(key, node::to_bytes(dump_v2_json(Json::object({{"metadata", md}, {"zarr_consolidated_format", 1}}))));
}

void to_v2_in_place(const StorePtr& store, const std::string& path, ConvertReport& rep) {
  const auto held = lock_node(*store, path);
  const auto d = node::read_doc(*store, path, true);
  if (!d) throw NotFoundError("no node at '" + node::shown(path) + "' in " + store->describe() + node::absent(*store));
  if (d->type == NodeType::Group)
    for (const auto& c : members(store, path)) {
      if (!c.error.empty()) throw MetadataError("cannot convert member '" + join(path, c.name) + "': " + c.error);
      to_v2_in_place(store, join(path, c.name), rep);
    }
  if (d->format == 2) {
    rep.notes.push_back(node::shown(path) + ": already Zarr v2");
    return;
  }
  for (int attempt = 0;; ++attempt) {
    // zarr.json as it is when the v2 documents are made from it: removed only if still so (a
    // writer of attributes takes no lock).
    const auto version = version_of(*store, node::meta_key(path));
    const auto now = node::read_doc(*store, path, true);
    if (!now || now->format != 3)
      throw NotFoundError("convert '" + node::shown(path) + "': its zarr.json went meanwhile");
    if (now->type == NodeType::Array) {
      const auto a = Array::open(store, path);
      const auto m = v2_metadata_of(a.metadata(), a.nshards_stored() == a.nshards(),
                                    attempt == 0 ? &rep.notes : nullptr, node::shown(path));
      make_snapshot(m, std::nullopt);  // validated before anything is written
      write_v2_documents(*store, path, m.attributes, node::kZarray, m.dump(), nullptr);
    } else {
      const auto g = v2_group_of(*store, path, *now);
      store->erase(node::key_in(path, node::kZmetadata));  // a leftover would describe another tree
      if (g.consolidated) write_v2_consolidated(store, path, store, path, g, nullptr);
      write_v2_documents(*store, path, g.attributes, node::kZgroup, g.doc, nullptr);
    }
    // The v2 documents are in place: zarr.json, which a reader prefers, goes last.
    if (erase_if_unchanged(*store, node::meta_key(path), version)) break;
    if (attempt == 20)
      throw ConflictError("convert '" + node::shown(path) + "': its zarr.json kept changing while it was converted");
  }
  ++rep.nodes;
}

void to_v2_copy(const StorePtr& src, const std::string& sp, const StorePtr& dst, const std::string& dp,
                ConvertReport& rep, std::vector<std::string>& written, const ProgressCallback& progress) {
  const auto d = node::read_doc(*src, sp, true);
  if (!d) throw NotFoundError("no node at '" + node::shown(sp) + "' in " + src->describe() + node::absent(*src));
  if (d->type == NodeType::Group) {
    const auto g = v2_group_of(*src, sp, *d);
    for (const auto& c : members(src, sp)) {
      if (!c.error.empty()) throw MetadataError("cannot convert member '" + join(sp, c.name) + "': " + c.error);
      to_v2_copy(src, join(sp, c.name), dst, join(dp, c.name), rep, written, progress);
    }
    if (g.consolidated) write_v2_consolidated(src, sp, dst, dp, g, &written);
    write_v2_documents(*dst, dp, g.attributes, node::kZgroup, g.doc, &written);
    ++rep.nodes;
    return;
  }
  const auto a = Array::open(src, sp);
  const auto& from = a.metadata().chunk_key_encoding;
  const auto m = v2_metadata_of(a.metadata(), a.nshards_stored() == a.nshards(), &rep.notes, node::shown(sp));
  make_snapshot(m, std::nullopt);
  // Chunks byte for byte under their v2 keys, then .zattrs and .zarray.
  const std::string sprefix = node::prefix_of(sp), dprefix = node::prefix_of(dp);
  for (const auto& key : a.stored_chunk_keys()) {
    const auto index = from.decode_or_throw(std::string_view(key).substr(sprefix.size()), m.rank());
    auto b = src->get(key);
    if (!b) continue;  // removed meanwhile: it reads as fill either way
    written.push_back(dprefix + m.chunk_key_encoding.encode(index));
    dst->set(written.back(), *b);
    ++rep.chunks_copied;
    if (progress) progress(ProgressStep{.objects = 1, .bytes = b->size()});
  }
  write_v2_documents(*dst, dp, m.attributes, node::kZarray, m.dump(), &written);
  ++rep.nodes;
}

}  // namespace

ConvertReport convert_to_v2(const StorePtr& store, const std::string& path_in) {
  if (!store) throw ArgumentError("convert_to_v2: no store given");
  const std::string path = normalize_node_path(path_in);
  check_v2_form(store, path, true);
  ConvertReport rep;
  in_place(2, rep, [&] { to_v2_in_place(store, path, rep); });
  node::refresh_consolidated(*store, path, /*replaced_format=*/3, /*subtree=*/true);
  return rep;
}

ConvertReport convert_to_v2(const StorePtr& src, const std::string& src_path, const StorePtr& dst,
                            const std::string& dst_path_in, bool overwrite, const ProgressCallback& progress) {
  if (!src || !dst) throw ArgumentError("convert_to_v2: no store given");
  const std::string sp = normalize_node_path(src_path), dp = normalize_node_path(dst_path_in);
  check_copy_places(*src, sp, *dst, dp, overwrite);
  check_v2_form(src, sp, false);
  const int replaced = node::prepare_create(*dst, dp, overwrite, nullptr, 2);
  return into_another_place(*dst, dp, replaced, [&](ConvertReport& rep, std::vector<std::string>& written) {
    to_v2_copy(src, sp, dst, dp, rep, written, progress);
  });
}

}  // namespace zarrpp
