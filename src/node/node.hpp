#pragma once
// What arrays and groups share as nodes of a hierarchy: their zarr.json key, reading and checking
// it, creating parent groups, replacing a node, and changing zarr.json by compare-and-swap.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "zarrpp/metadata/metadata.hpp"
#include "zarrpp/metadata/node_type.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp::node {

// "" for the root, else "path/".
std::string prefix_of(const std::string& path);
// The node's metadata key: "zarr.json" or "path/zarr.json".
std::string meta_key(const std::string& path);
// How messages name a node: "/" for the root.
std::string shown(const std::string& path);
// "; <why nothing can be there>" when the store knows (its directory does not exist), else "".
std::string absent(Store& store);
Bytes to_bytes(const std::string& s);
// A number never handed out before in this process: stamps each metadata a handle holds, so callers
// (the Python attribute cache) can tell in O(1) whether it changed.
std::uint64_t next_generation();

// The most bytes a zarr.json may hold (a StoreError, limit_exceeded, beyond it).
inline constexpr std::uint64_t kMaxMetadataBytes = std::uint64_t{256} << 20;

// The node's zarr.json with its version, or nullopt when there is none.
std::optional<VersionedBytes> read(Store& store, const std::string& path);

// Zarr v2's documents.
inline constexpr const char* kZarray = ".zarray";
inline constexpr const char* kZgroup = ".zgroup";
inline constexpr const char* kZattrs = ".zattrs";
inline constexpr const char* kZmetadata = ".zmetadata";
inline std::string key_in(const std::string& path, const char* name) { return prefix_of(path) + name; }

// A node's metadata document, in either format.
// Runs f (which reads the document `key` just fetched); a MetadataError it throws also says when
// the response that brought the bytes was cut in transit (so the document is not taken as broken).
template <class F>
auto naming_transport(Store& store, const std::string& key, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const MetadataError& e) {
    const std::string why = store.explain_unreadable(key);
    if (why.empty()) throw;
    throw_like(e, std::string(e.what()) + "; " + why);
  }
}

struct Doc {
  int format = 3;  // 3: zarr.json; 2: .zarray or .zgroup
  NodeType type = NodeType::Group;
  std::string key;  // the document's store key
  VersionedBytes stored;
  Json json;
  // A v2 node only consolidated metadata describes: its .zattrs entry there (null: none), and
  // `stored` holds the .zarray/.zgroup entry (no version: nothing is stored under `key`).
  std::optional<Json> consolidated_attributes;
  // A v2 node whose .zattrs was read with its document (on stores with requests in flight): what
  // it held (nullopt inside: no .zattrs).
  std::optional<std::optional<VersionedBytes>> attributes_read;
};
// zarr.json when there is one (so a folder an interrupted conversion left with both opens as v3),
// else .zarray, else .zgroup; nullopt when the path holds no node. MetadataError on malformed
// JSON or a document that declares no valid node type. With `consolidated`, a path holding none of
// them is looked up in the .zmetadata at or above it, as zarr.open_consolidated reads nodes (for
// reading and converting only: changes to such a node's documents find no document to change).
std::optional<Doc> read_doc(Store& store, const std::string& path, bool consolidated = false);
// The error for a node whose document `key` (or whose documents, key "") is gone: NotFoundError,
// or UnsupportedError when only consolidated metadata describes it (zarrpp changes a node's own
// documents, and that node has none).
[[noreturn]] void throw_missing(Store& store, const std::string& path, const std::string& key);
// A v2 node's attributes: .zattrs, or its consolidated entry when that is where its document was.
Json v2_attributes_of(Store& store, const std::string& path, const Doc& doc);
// A v2 node's .zattrs (null when there is none; MetadataError when it is not a JSON object).
Json read_v2_attributes(Store& store, const std::string& path);

// The one reader of an array's document, for opening (read_array) and for changing it
// (parse_array, with the bytes a compare-and-swap read): zarr.json, or .zarray with .zattrs
// (`v2_attributes`, null when absent) read through codec::from_v2_document. NotFoundError when
// there is no node; MetadataError (wrong_node_type for a group) naming the document otherwise.
struct ArrayDoc {
  ArrayMetadata meta;
  Bytes stored;     // the document's bytes as stored
  std::string key;  // its store key
};
ArrayDoc read_array(Store& store, const std::string& path);
ArrayMetadata parse_array(Store& store, const std::string& path, const Bytes& bytes, int format,
                          const Json& v2_attributes);
// Whether the path still holds v2 documents (.zarray/.zgroup) beside a zarr.json.
bool has_v2_documents(Store& store, const std::string& path);
// The key of the document that holds a node's metadata in `format`, for a node of `type`.
std::string doc_key(const std::string& path, int format, NodeType type);
// Writes a v2 node's attributes by compare-and-swap on .zattrs (`change` gets the current ones).
Json update_v2_attributes(Store& store, const std::string& path, const std::function<Json(const Json&)>& change);
// After the node at `path` changed (created, resized, attributes, removed): brings consolidated
// metadata that lists it up to date — for a v2 node every .zmetadata at it or above it (one read
// per level), for a v3 node the "consolidated_metadata" of its ancestor groups' zarr.json (one
// read per ancestor), with the groups between them and the node (parents a create made). Levels
// above the store's root count too: while the folder holding the root
// is a group (Store::parent: a FileStore walks the real parents of its canonical root), the walk
// goes up and refreshes from the outermost such group. `replaced_format`: the format of the node
// this one replaced (create with overwrite) or was converted from, whose kind of consolidated
// metadata must forget it (0: none, or the same). `subtree`: the node is a group whose members
// changed too (a conversion): their entries are refreshed as well. The change has been made,
// so a failure does not throw: each document that could not be refreshed is warned of (zarrpp::warn)
// by name, with how to refresh it; a remote store opened below its bucket's root warns once that
// the groups above were not checked.
void refresh_consolidated(Store& store, const std::string& path, int replaced_format = 0, bool subtree = false);
// Writes the consolidated metadata of the group at `path` anew from the nodes below it, as
// zarr-python's consolidate_metadata does: a v2 group gets .zmetadata (its own .zgroup/.zattrs
// and every v2 node's documents below it), a v3 group a "consolidated_metadata" in its zarr.json
// listing every v3 node below it by relative path (child groups with an empty list of their own).
// NotFoundError when no group is there; UnsupportedError on a store that cannot list.
void consolidate(Store& store, const std::string& path);
// The paths (relative to the group) and documents that consolidated metadata at or above the
// group lists for its direct children: for stores that cannot list. Empty when there is none.
std::vector<std::pair<std::string, NodeType>> consolidated_children(Store& store, const std::string& group_path);
// Parses zarr.json text; MetadataError naming the node on malformed JSON.
Json parse(const Bytes& bytes, const std::string& path);
// The node type a document declares; MetadataError when it declares none or an unknown one.
NodeType type_of(const Json& doc, const std::string& path);
// Throws MetadataError (wrong_node_type) unless the document is of type `want`.
void expect_type(const Json& doc, const std::string& path, NodeType want);

// Before creating a node at `path`: refuses (ConflictError already_exists) when one is there and
// `overwrite` is false, else removes it; then creates the missing parent groups (as zarr-python
// does), refusing (MetadataError wrong_node_type) when a parent is an array. Returns the format of
// the node it removed (0: none), for refresh_consolidated.
// `array`: the metadata of the array about to be created (nullptr for a group): chunk keys of
// its encoding already at `path` without a node are refused, or deleted with `overwrite`.
int prepare_create(Store& store, const std::string& path, bool overwrite, const ArrayMetadata* array = nullptr,
                   int zarr_format = 3);

// Writes a new array's metadata documents (zarr.json; or .zattrs then .zarray for v2, .zarray
// last as it makes the node), then refreshes consolidated metadata.
void write_array_documents(Store& store, const std::string& path, const ArrayMetadata& m, const Bytes& meta_bytes,
                           int replaced_format = 0);

// Deletes what belongs to the node at `path` and nothing else: first the document that makes it a
// node (zarr.json, .zarray or .zgroup), then an array's chunk keys or a group's child nodes
// (recursively), then its other documents and the empty directories left. The first failure
// stops it, with an error saying what was removed and what is still stored. MetadataError,
// deleting nothing, when the document cannot be read well enough to know what is the node's.
void remove_owned(Store& store, const std::string& path);
// Throws (saying "nothing was deleted") when the document of a new node at `path` (`array`, or a
// group when null) could not be written now: see Store::check_can_write.
void check_can_write_document(Store& store, const std::string& path, const ArrayMetadata* array, int zarr_format);
// After deleting `keys` of the node at `node_prefix`: removes the directories they were in, and
// those between them and the node's folder, that are now empty (nothing else).
void prune_dirs_of(Store& store, const std::vector<std::string>& keys, const std::string& node_prefix);

// The chunks an array of `rank` dimensions at `path` stores, as (chunk index, store key), in the
// store's order; keys of the chunk tree that are not chunk keys of `enc` are not the array's and
// are left out. StoreError when a listed key lies in a directory standing where a chunk should be
// (reading that chunk fails, so it must not be taken for missing).
std::vector<std::pair<std::vector<std::int64_t>, std::string>> list_chunks(Store& store, const std::string& path,
                                                                           const ChunkKeyEncoding& enc,
                                                                           std::size_t rank);

// Which of two places (a store and a node path in it) lies in the other, by what the stores say
// the folders are (Store::identity_chain): on a local file system through bind mounts, symlinks
// and "..", elsewhere by normalised URL.
enum class Overlap { none, same, first_inside_second, second_inside_first };
Overlap overlap(const Store& a, const std::string& path_a, const Store& b, const std::string& path_b);
// The same question answered by the stores' contents, for stores whose identity names the store
// object and not the files behind it (a Python mapping over another library's store): a marker
// key is written through `dst` into the node folder `dst_path`, looked for through `src` in
// `src_path`'s folder, the folders above it (also above the store's root, where parent() reaches)
// and the keys below it, and removed again. `first` is the source: first_inside_second means the
// source lies inside the destination. Nothing of `src` is written.
Overlap probe_overlap(Store& src, const std::string& src_path, Store& dst, const std::string& dst_path);

// The one node update: reads a node's document, lets `change` compute the next bytes from it
// (nullopt: leave it), and writes them by compare-and-swap, computing again whenever another writer
// won, as the swap retry policy allows (then ConflictError naming the document). Bytes equal to
// the stored ones are not written. zarr.json, .zarray, .zattrs and both kinds of consolidated
// metadata change through it.
struct UpdateOptions {
  std::string key;          // the document's key; empty: the node's zarr.json
  bool missing_ok = false;  // `change` gets nullopt for a missing document (else NotFoundError)
  // On a store without conditional writes, write the result unconditionally (as zarr-python
  // does: a concurrent writer's change to the same document may be lost) instead of refusing
  // with ConflictError. For documents that are copies or that zarr-python writes that way too.
  bool unconditional_fallback = false;
};
void update(Store& store, const std::string& path,
            const std::function<std::optional<Bytes>(const std::optional<VersionedBytes>& cur)>& change,
            const UpdateOptions& options = {});

// `attributes` with the keys of `patch` set (a JSON object each; MetadataError otherwise).
Json merge_attributes(const Json& attributes, const Json& patch);

// The attribute changes arrays and groups share, each a function of the attributes stored now
// (run again when a compare-and-swap lost): all of them replaced by `attributes`, `patch` merged in
// (merge_attributes), or `keys` removed (those that were there listed in `removed`).
// MetadataError when `attributes` or `patch` is not a JSON object.
using AttributeChange = std::function<Json(const Json&)>;
AttributeChange replacing_attributes(const Json& attributes);
AttributeChange merging_attributes(const Json& patch);
AttributeChange removing_attributes(const std::vector<std::string>& keys, std::vector<std::string>& removed);

}  // namespace zarrpp::node
