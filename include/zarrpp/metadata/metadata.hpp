#pragma once
/// @file
/// zarr.json <-> typed structs for arrays and groups (Zarr v3 core), plus the pieces that live in
/// it: fill values, chunk key encodings and chunk grid metadata.
#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrpp/core/dtype.hpp"
#include "zarrpp/core/ndarray.hpp"

namespace zarrpp {

/// Insertion-ordered JSON: attributes keep the order their writer gave them.
using Json = nlohmann::ordered_json;

// ---- UTF-8 ---------------------------------------------------------------------------------
/// Appends code point cp as UTF-8 (surrogates too, as WTF-8).
void append_utf8(std::string& out, std::uint32_t cp);
/// Decodes one UTF-8 sequence at s[i] (a byte >= 0x80). Returns its length (0: invalid) and sets cp.
/// With `surrogates`, the three-byte forms of U+D800..U+DFFF (WTF-8) are accepted too.
std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t& cp, bool surrogates);

// ---- data types ----------------------------------------------------------------------------
/// zarr.json's "data_type": a core type's name, or the configured extension types zarr-python 3
/// writes for NumPy's U<n> ("fixed_length_utf32"), S<n> ("null_terminated_bytes"), datetime64 and
/// timedelta64 ("numpy.datetime64" with unit and scale_factor). Throws MetadataError naming the type.
DataType data_type_from_json(const Json& j);
Json data_type_to_json(const DataType& t);  ///< and back: what zarr.json states for a data type
/// A NumPy type as Zarr v2's .zarray states it: a dtype string ("<i4", ">U3") or a structured
/// type's descr ([["a", "<i4"], ["b", ">f8", [2]]]; an unnamed field is named f<index>, as NumPy
/// names it); `big_endian` says the stored byte order. Throws MetadataError (UnsupportedError for
/// what zarrpp cannot hold) naming the type.
NumpyType numpy_type_from_v2(const Json& dtype);  ///< reads .zarray's dtype (see NumpyType)
/// A data type as a user gives it, with the byte order it states: parse_numpy_spelling's forms, or a
/// structured type's descr as JSON (DataType::name()'s form; NumPy's dtype.descr), whose padding
/// (unnamed fields) is refused. Throws ArgumentError naming the text.
NumpyType numpy_type_from_user(std::string_view text);
/// numpy_type_from_user's type, refusing a big-endian one (the byte order is the bytes codec's).
DataType data_type_from_user(std::string_view text);

// ---- fill values ---------------------------------------------------------------------------
/// A fill value is held as bytes: a fixed-size element's bytes in native (little-endian) order, so
/// NaN payloads and raw bits round-trip exactly; a variable-length element's text (UTF-8) or bytes.
/// "string" takes a JSON string, "bytes" base64 (as zarr-python 3); U<n> a string of at most n
/// characters, S<n> base64 of at most n bytes (NUL-padded), datetime64/timedelta64 an integer or
/// "NaT"; a structured type an object of its fields' values by name (a subarray field's as nested
/// lists; fill_value_to_json gives this form), a list of them in order, or base64 of one element.
Bytes parse_fill_value(const Json& j, const DataType& dtype);
Json fill_value_to_json(std::span<const std::uint8_t> value, const DataType& dtype);  ///< and back to JSON
/// A fill value a caller gives for a new array (ArraySpec::fill_value, Python's fill_value=) in the
/// form zarr.json stores: its JSON encoding, with the conveniences callers expect and nothing
/// lost: an integral number for an integer type (3.0 -> 3), 0 or 1 for bool, a real number for a
/// complex type (-> [x, 0]), and bytes (a JSON binary value) for a raw type (-> its byte values) or
/// the bytes type (-> base64). parse_fill_value then checks it as it checks zarr.json's.
Json canonical_fill_value(const Json& given, const DataType& dtype);
/// The default fill value: zero bits (0, false, +0.0, zero bytes), as zarr-python 3 uses; the
/// empty string or bytes for variable-length types.
Bytes default_fill_value(const DataType& dtype);

/// xarray's _FillValue attribute of a Zarr v3 array (xarray reads a v3 array's missing value from
/// it, not from fill_value), in xarray's encoding: integers and bools as JSON, floats as base64 of
/// the little-endian float64, complex numbers as two of those, bytes (S<n> without its NUL
/// padding, variable-length bytes) as base64; times, which xarray's decoder refuses on v3, as
/// zarr.json states their fill value, so the _FillValue xarray's zarr engine shows of a v2 time
/// array is kept on v3. nullopt for text (U<n>, string: xarray masks their v2 fill value), raw and
/// structured types.
std::optional<Json> xarray_fill_attribute(std::span<const std::uint8_t> value, const DataType& dtype);
/// The element an attribute in that encoding states, for the types whose encoding is not plain
/// JSON (floats, complex, U<n>, S<n>, string, bytes, times); nullopt when it is not in that form.
std::optional<Bytes> xarray_fill_from_attribute(const Json& attr, const DataType& dtype);

/// An array's fill value: one field for both formats and every data type.
struct FillValue {
  Bytes bytes;  ///< as parse_fill_value gives it

  /// Zarr v2 only: what .zarray states when that is not `bytes` itself, kept to be written back
  /// unchanged: null (no fill value: missing chunks read as zeros here), or an object array's fill
  /// value that is not a string (zarr-python 2's default 0). Other readers read a missing chunk as
  /// something else then, so chunks holding only `bytes` are stored all the same.
  std::optional<Json> v2_stated;
  friend bool operator==(const FillValue&, const FillValue&) = default;
};

/// Standard base64 (RFC 4648, with padding); nullopt for malformed input.
/// @{
std::string base64_encode(std::span<const std::uint8_t> bytes);
std::optional<Bytes> base64_decode(std::string_view text);
/// @}

// ---- chunk key encodings ---------------------------------------------------------------------
/// How chunk indices become store keys: `default` ("c/1/-2", separator '/' or '.') or `v2`
/// ("1.-2").
struct ChunkKeyEncoding {
  /// The two encodings of the Zarr v3 spec.
  enum class Kind {
    Default,  ///< "c" then the indices ("c/1/-2")
    V2        ///< the indices alone ("1.-2"), as Zarr v2 names chunks
  };
  Kind kind = Kind::Default;  ///< which encoding
  char separator = '/';       ///< between the parts: '/' or '.'

  static ChunkKeyEncoding default_(char sep = '/') { return {Kind::Default, sep}; }  ///< "default"
  static ChunkKeyEncoding v2(char sep = '.') { return {Kind::V2, sep}; }             ///< "v2"

  /// The key of a chunk (relative to the array's node), e.g. "c/-1/0", "c.2", "0.1", "c" (0-d).
  std::string encode(std::span<const std::int64_t> chunk_index) const;
  /// Strictly decodes a key back to chunk indices for an array of `rank` dimensions; returns
  /// nullopt when the key is not a chunk key of this encoding (e.g. "zarr.json", "c/-0/0").
  std::optional<std::vector<std::int64_t>> decode(std::string_view key, std::size_t rank) const;
  /// The same, but throws MetadataError naming the offending part.
  std::vector<std::int64_t> decode_or_throw(std::string_view key, std::size_t rank) const;
  /// The key prefix under which all chunks live ("c/" or "c." for default, "" for v2).
  std::string prefix() const;

  static ChunkKeyEncoding from_json(const Json& j);  ///< zarr.json's chunk_key_encoding, validated

  /// The encoding a Zarr v2 .zarray states by its "dimension_separator" ("." when absent or null).
  static ChunkKeyEncoding from_v2_json(const Json& zarray);
  Json to_json() const;  ///< the chunk_key_encoding field
  friend bool operator==(const ChunkKeyEncoding&, const ChunkKeyEncoding&) = default;
};

/// Parses one decimal chunk index strictly: ^(0|-?[1-9][0-9]*)$ within int64.
std::optional<std::int64_t> parse_chunk_index(std::string_view s);

// ---- chunk grid metadata ---------------------------------------------------------------------
/// A run of `count` chunks of `size` elements along one dimension of a rectilinear grid.
struct ChunkRun {
  std::int64_t size = 1;   ///< elements per chunk
  std::int64_t count = 1;  ///< chunks of that size in a row
  friend bool operator==(const ChunkRun&, const ChunkRun&) = default;
};
/// One dimension's chunk sizes in order, adjacent runs of the same size merged (the form they are
/// written in: zarr-python's run-length rule).
using ChunkRuns = std::vector<ChunkRun>;

/// The `chunk_grid` field of zarr.json: its kind, chunk shape or sizes, and for the bounded grids
/// the origin, lower bound and first chunk.
struct ChunkGridMetadata {
  /// The grids zarrpp reads and writes.
  enum class Kind {
    Regular,            ///< "regular": chunks of one shape from index 0
    RegularBounded,     ///< "regular_bounded": regular chunks from an origin, a domain from a lower bound
    Rectilinear,        ///< "rectilinear": chunk sizes listed per dimension
    RectilinearBounded  ///< "rectilinear_bounded": listed sizes, with chunks before index 0
  };
  Kind kind = Kind::Regular;  ///< which grid

  /// Every chunk's shape; on a rectilinear grid the first chunk's (what the codecs are checked
  /// against), the sizes themselves are `chunk_runs`.
  std::vector<std::int64_t> chunk_shape;
  /// regular_bounded: the coordinate where chunk index 0 starts. rectilinear_bounded: where chunk
  /// first_chunk[d] (the first one listed) starts. Zeros for the others.
  std::vector<std::int64_t> origin;
  std::vector<std::int64_t> lower_bound;  ///< the coordinate of array index 0 (zeros when unbounded)

  /// Rectilinear grids: per dimension its chunk sizes, or empty for a dimension stated as a bare
  /// integer (chunks of chunk_shape[d] as far as the shape needs, which stays so as it grows).
  std::vector<ChunkRuns> chunk_runs;
  /// rectilinear_bounded only: the index (key) of each dimension's first listed chunk.
  std::vector<std::int64_t> first_chunk;

  std::string name() const;  ///< the grid's name in zarr.json

  /// Whether chunk sizes are listed (`rectilinear` and `rectilinear_bounded`).
  bool rectilinear() const { return kind == Kind::Rectilinear || kind == Kind::RectilinearBounded; }
  bool rectilinear_bounded() const { return kind == Kind::RectilinearBounded; }  ///< a rectilinear_bounded grid

  /// The index of the first listed chunk along `d` (0 unless rectilinear_bounded).
  std::int64_t first(std::size_t d) const { return first_chunk.empty() ? 0 : first_chunk[d]; }
  /// Where chunk index 0 would start on a dimension of equal chunks (regular, regular_bounded and
  /// bare rectilinear dimensions): origin - first_chunk * chunk_shape (checked).
  std::int64_t regular_origin(std::size_t d) const;
  static ChunkGridMetadata regular(std::vector<std::int64_t> chunk_shape);  ///< a regular grid

  /// A regular_bounded grid: chunks of `chunk_shape` starting at `origin`, the domain at `lower_bound`.
  static ChunkGridMetadata regular_bounded(std::vector<std::int64_t> chunk_shape, std::vector<std::int64_t> origin,
                                           std::vector<std::int64_t> lower_bound);
  /// `sizes[d]`: dimension d's chunk sizes in order, or one entry {n} with bare[d] true for a
  /// dimension stated as the bare integer n. Sizes must be >= 1.
  static ChunkGridMetadata rectilinear_sizes(const std::vector<std::vector<std::int64_t>>& sizes,
                                             const std::vector<bool>& bare = {});
  /// The sum of dimension d's chunk sizes (rectilinear, explicit dimension).
  std::int64_t covered(std::size_t d) const;
  /// The number of chunks dimension d lists (rectilinear, explicit dimension).
  std::int64_t listed(std::size_t d) const;
  /// Each dimension's distinct chunk sizes (one entry per dimension on a regular grid).
  std::vector<std::vector<std::int64_t>> distinct_sizes() const;
  /// Why the listed chunks cannot hold an array of `shape` ("" when they can): a rectilinear
  /// dimension's chunks must cover [lower_bound, lower_bound + shape), from origin.
  std::string cover_problem(const std::vector<std::int64_t>& shape) const;
  /// The grid of zarr.json's chunk_grid field, validated for an array of `rank` dimensions.
  static ChunkGridMetadata from_json(const Json& j, std::size_t rank);
  Json to_json() const;  ///< the chunk_grid field as zarrpp writes it
  friend bool operator==(const ChunkGridMetadata&, const ChunkGridMetadata&) = default;
};
/// Merges adjacent runs of the same size (counts are checked against int64 overflow).
ChunkRuns merge_runs(const ChunkRuns& runs);

// ---- codecs (as metadata; the codec layer gives them meaning) --------------------------------
/// One codec as zarr.json states it: its name and configuration (the codec layer gives it meaning).
struct CodecMetadata {
  std::string name;                   ///< the codec's name ("zstd", "bytes", "numcodecs.delta", ...)
  std::optional<Json> configuration;  ///< absent when the document had none

  CodecMetadata() = default;  ///< no codec (an empty name)

  /// CodecMetadata{"crc32c"}: no configuration.
  CodecMetadata(std::string codec_name) : name(std::move(codec_name)) {}  // NOLINT(google-explicit-constructor)
  /// CodecMetadata{"zstd", {{"level", 3}}}: a configuration object, written as nlohmann::json reads
  /// braces (a list of {"key", value} pairs is an object).
  /// (A null Json, as from CodecMetadata{"x", {}}, means no configuration.)
  CodecMetadata(std::string codec_name, Json config)
      : name(std::move(codec_name)),
        configuration(config.is_null() ? std::nullopt : std::optional<Json>(std::move(config))) {}
  CodecMetadata(std::string codec_name, std::nullopt_t) : name(std::move(codec_name)) {}  ///< no configuration

  /// An optional configuration as read (a template, so braces above never pick it).
  template <class O>
    requires std::same_as<std::remove_cvref_t<O>, std::optional<Json>>
  CodecMetadata(std::string codec_name, O&& config)
      : name(std::move(codec_name)), configuration(std::forward<O>(config)) {}

  /// A codec entry of a codecs list (a name, or {"name", "configuration"}); errors name `where`.
  static CodecMetadata from_json(const Json& j, const std::string& where);
  Json to_json() const;  ///< the entry as zarr.json states it
  friend bool operator==(const CodecMetadata& a, const CodecMetadata& b) {
    return a.name == b.name && a.configuration == b.configuration;
  }
};

// ---- array and group documents ---------------------------------------------------------------
/// Per-dimension coordinate range [inclusive_min, exclusive_max).
struct DimDomain {
  std::int64_t inclusive_min;  ///< the first coordinate
  std::int64_t exclusive_max;  ///< one past the last coordinate
  friend bool operator==(const DimDomain&, const DimDomain&) = default;
};
/// The domain of an array: one coordinate range per dimension.
using Domain = std::vector<DimDomain>;
/// "[-3:6, 0:4]".
std::string domain_str(const Domain& d);

/// An array's metadata: the fields of its zarr.json (or a Zarr v2 array's .zarray and .zattrs),
/// validated when read and written back as zarr-python writes them.
struct ArrayMetadata {
  std::vector<std::int64_t> shape;      ///< elements per dimension
  DataType data_type;                   ///< the elements' type
  ChunkGridMetadata chunk_grid;         ///< where the chunks lie
  ChunkKeyEncoding chunk_key_encoding;  ///< how chunk keys are spelled
  FillValue fill_value;                 ///< what elements no stored chunk holds read as
  std::vector<CodecMetadata> codecs;    ///< the codec chain, in order
  Json attributes = Json::object();     ///< the user attributes

  /// A name (or none) per dimension.
  std::optional<std::vector<std::optional<std::string>>> dimension_names;
  /// Unknown top-level fields marked "must_understand": false, kept and written back unchanged.
  Json extra_fields = Json::object();

  /// 3 (zarr.json) or 2 (.zarray + .zattrs). A v2 array is held in the v3 form above (its filters
  /// and compressor as the equivalent codecs, `order` "F" as a transpose, its key encoding "v2")
  /// plus what only .zarray states, so it is written back as it was.
  int zarr_format = 3;
  /// What only a Zarr v2 array states (.zarray's dtype string, order, dimension separator, ...).
  struct V2 {
    Json dtype;                 ///< as .zarray gives it: "<i4", ">f8", "|b1", "<M8[ns]", [["a", "<i4"]]
    char order = 'C';           ///< 'C' or 'F'
    Json compressor = nullptr;  ///< numcodecs configuration or null
    Json filters = nullptr;     ///< array of numcodecs configurations or null

    /// Whether .zarray states "dimension_separator" (zarr-python before 2.8 did not; then the
    /// node layer finds the key layout from what is stored, and .zarray goes on not stating it
    /// unless that was decided by stored chunks).
    bool separator_stated = true;
    friend bool operator==(const V2&, const V2&) = default;
  } v2;  ///< what .zarray states (a Zarr v2 array)

  std::size_t rank() const { return shape.size(); }  ///< number of dimensions

  /// The coordinates the array covers: [lower_bound, lower_bound + shape) per dimension (lower
  /// bound 0 on a `regular` grid). The one place the domain is derived from the metadata.
  Domain domain() const;

  /// Parses and validates a document; throws MetadataError (UnsupportedError) naming the field.
  static ArrayMetadata from_json(const Json& j);
  static ArrayMetadata parse(std::string_view text);  ///< from_json of a zarr.json's text

  /// The fields of a Zarr v2 array's .zarray and .zattrs (.zattrs: an object, or null when absent)
  /// but its codecs, which the codec layer reads (codec::from_v2_document, the way to read a
  /// .zarray): `object_type` gives the data type an object array's filters name.
  static ArrayMetadata from_v2_fields(const Json& zarray, const Json& zattrs,
                                      const std::function<DataType(const Json& filters)>& object_type);
  /// What .zarray states about a codec chain (the codec layer's codec::to_v2).
  struct V2Form {
    Json compressor = nullptr;  ///< .zarray's compressor (numcodecs configuration) or null
    Json filters = nullptr;     ///< .zarray's filters or null
    char order = 'C';           ///< 'C' or 'F'
    bool big_endian = false;    ///< elements stored big-endian
  };
  /// This metadata as a Zarr v2 array whose .zarray states `form` (codecs not changed; see
  /// codec::as_v2, the way to make metadata v2): no lower bound or extra fields (UnsupportedError),
  /// dimension_names go to "_ARRAY_DIMENSIONS". On v2 metadata it re-states compressor, filters,
  /// order and byte order.
  ArrayMetadata with_v2_form(const V2Form& form) const;
  /// The byte order a v2 array's dtype states.
  bool v2_big_endian() const;
  /// Whether chunks holding only the fill value must still be stored, because other readers read
  /// a missing chunk as something else (a v2 array whose .zarray fill value is null).
  bool must_store_empty_chunks() const { return zarr_format == 2 && fill_value.v2_stated.has_value(); }
  /// What the elements no stored chunk holds read as when that is not of the data type: a Zarr v2
  /// object array's fill value as .zarray states it when it is not a string of a string array
  /// (zarr-python 2's default 0, null, a string on a bytes array), which zarr-python 2 returns for
  /// them. nullptr when missing elements read as the fill value.
  /// (A 0-d array without fill value reads the number 0 there: zarr-python 2 fills np.zeros.)
  const Json* missing_element() const {
    static const Json zero = 0;
    if (!(zarr_format == 2 && data_type.is_vlen() && fill_value.v2_stated)) return nullptr;
    return rank() == 0 && fill_value.v2_stated->is_null() ? &zero : &*fill_value.v2_stated;
  }
  /// The bytes an element holding the fill value has in memory: fill_value.bytes for fixed-size
  /// types; for variable-length ones the index of the fill value in a read's strings (0).
  Bytes fill_element() const;
  /// The fill value as text (variable-length types).
  std::string fill_text() const { return {fill_value.bytes.begin(), fill_value.bytes.end()}; }
  /// .zarray (zarr_format 2 only), as zarr-python 2 writes it (sorted keys, 4-space indent).
  Json to_v2_json() const;

 private:
  static ArrayMetadata from_json_checked(const Json& j);

 public:
  Json to_json() const;  ///< zarr.json as zarrpp writes it (a v3 array)

  /// Stable serialisation: same metadata, same bytes (2-space indent, fixed field order). For a
  /// v2 array, its .zarray.
  std::string dump() const;
  /// Checks the invariants a writer must keep (e.g. the JavaScript-safe integer range).
  void validate_for_write() const;
};

/// A group's metadata: its attributes and the other fields of its zarr.json (or .zgroup).
struct GroupMetadata {
  Json attributes = Json::object();    ///< the user attributes
  Json extra_fields = Json::object();  ///< other fields of zarr.json, kept as they are
  int zarr_format = 3;                 ///< 2: .zgroup (+ .zattrs)

  /// zarr-python 3's "consolidated_metadata" (null, or {"kind": "inline", "metadata": {...}}), kept
  /// and written back; the metadata of nodes it lists, by path relative to the group.
  Json consolidated = nullptr;
  bool has_consolidated = false;                      ///< whether zarr.json holds consolidated metadata
  static GroupMetadata from_json(const Json& j);      ///< a group's zarr.json, validated
  static GroupMetadata parse(std::string_view text);  ///< from_json of zarr.json's text
  Json to_json() const;                               ///< zarr.json as zarrpp writes it

  /// zarr.json, or for a v2 group its .zgroup.
  std::string dump() const;
};

/// JSON as zarrpp reads and writes it. Beyond strict JSON, the reader takes what Python's json module
/// reads and zarr-python stores: the bare tokens NaN, Infinity and -Infinity (held as a
/// number_float NaN / +-infinity; a number beyond double's range reads as +-infinity, as in
/// Python), and escaped lone UTF-16 surrogates such as "\udcff" (Python writes these for
/// undecodable file names), held in the std::string as WTF-8: the surrogate's code point in UTF-8's
/// three-byte form (ED B3 BF for U+DCFF), as Python's "surrogatepass" encodes it. The writers give
/// both back as json.dumps does (bare NaN/Infinity/-Infinity, lowercase "\udcff" escapes); strict
/// JSON readers (zarrita.js, TensorStore) refuse such documents.
///
/// Zarr v2 documents as zarr-python 2 writes them: sorted keys, 4-space indent, ASCII.
std::string dump_v2_json(const Json& j);
/// .zattrs text for attributes.
std::string dump_v2_attributes(const Json& attributes);

/// JSON documents: at most this deep (a deeper zarr.json or attribute value is refused, before
/// anything recursive could overflow the stack on it).
inline constexpr std::size_t kMaxJsonDepth = 256;
/// Parses zarr.json text into JSON in linear time, with a MetadataError naming `where` on malformed
/// input or nesting beyond kMaxJsonDepth. A repeated object key keeps its last value. A document
/// the process has not the memory for is refused before it is built (check_memory_for_document).
Json parse_json_document(std::string_view text, const std::string& where);
/// @{
/// The memory reading the JSON `text` and using it may take at most (the values' slots, the blocks
/// of arrays, objects and strings, counted for the copies a command holds at once; measured in
/// docs/reliability.md), and the check parse_json_document makes for a document of 64 KiB or more:
/// LimitError ("out of memory: ...") naming `where` when that much address space cannot be had
/// now, so running out never happens while a document is built or torn down.
std::uint64_t document_memory_bound(std::string_view text);
void check_memory_for_document(std::string_view text, const std::string& where);
/// @}
/// Pretty-prints as zarr.json is written (2-space indent; values nested deeper than 8 levels on
/// one line, so rewriting a document never multiplies its size).
std::string dump_json(const Json& j);
/// One line, nothing escaped but what JSON needs and lone surrogates; never throws (bytes that are
/// not UTF-8 become U+FFFD). For messages, printing and handing JSON to Python's json.loads.
std::string json_text(const Json& j);
/// Throws MetadataError naming `where` when `j` is nested deeper than kMaxJsonDepth.
void check_json_depth(const Json& j, const std::string& where);

/// Validates one node name (a path segment) as the core spec says; throws MetadataError.
void validate_node_name(std::string_view name);
/// Zarr v3's further rule for a node's path (each name): none starts with "__", which v3 reserves
/// (a v2 node may have such a name; one cannot be created or converted into v3).
void validate_v3_node_path(std::string_view path);
/// Normalises a node path ("a/b", "/a/b/", "" = root) and validates each segment.
std::string normalize_node_path(std::string_view path);

}  // namespace zarrpp
