#pragma once
/// @file
/// Arrays: create/open, read and write every selection, and grow at both ends.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "zarrpp/codec/codec.hpp"
#include "zarrpp/core/ndarray.hpp"
#include "zarrpp/metadata/metadata.hpp"
#include "zarrpp/select/indexing.hpp"
#include "zarrpp/select/selection.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp {

class ChunkGrid;

/// How to create an array. Field order allows designated initialisers:
///   {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32}
struct ArraySpec {
  Shape shape{};                       ///< elements per dimension
  Shape chunks{};                      ///< the (inner) chunk shape; with `shards`, the inner chunk of each shard
  DataType dtype = DataType::float64;  ///< the elements' data type

  /// JSON ("NaN", 0, [1, 2]; canonical_fill_value); none: 0. Zarr v2 only: null, no fill value
  /// (.zarray says null; missing chunks read as zeros here, as zarr-python 2 leaves them undefined).
  std::optional<Json> fill_value = std::nullopt;
  std::optional<codec::Any> compressor = std::nullopt;  ///< one compressor, e.g. codec::Zstd{.level = 3}
  bool crc32c = false;                                  ///< append a crc32c checksum to every chunk
  OptionalShape shards = std::nullopt;                  ///< shard shape (a multiple of `chunks`), e.g. {8, 8}

  /// The whole pipeline, instead of the parts (compressor, crc32c, shards, endian, filters,
  /// compressors, serializer), which codec::build_chain puts together otherwise.
  std::optional<std::vector<codec::Any>> codecs = std::nullopt;
  std::optional<codec::Endian> endian = std::nullopt;                     ///< of the bytes codec (default little)
  ChunkKeyEncoding chunk_key_encoding = ChunkKeyEncoding::default_('/');  ///< how chunk keys are spelled

  /// A name (or none) per dimension, as zarr.json's dimension_names.
  std::optional<std::vector<std::optional<std::string>>> dimension_names = std::nullopt;
  Json attributes = Json::object();          ///< the user attributes (a JSON object)
  OptionalShape lower_bound = std::nullopt;  ///< create with a domain [lower_bound, lower_bound + shape), e.g. {-4}
  OptionalShape origin = std::nullopt;       ///< where chunk 0 starts (defaults to lower_bound)
  bool overwrite = false;                    ///< replace a node at the path (otherwise an existing node is an error)

  /// 3 (zarr.json) or 2 (.zarray/.zattrs, as zarr-python 2 writes): a v2 array takes codecs that
  /// v2 can state (a numcodecs filter chain, bytes, one compressor; no sharding or crc32c), no
  /// lower bound, and keeps dimension_names as the "_ARRAY_DIMENSIONS" attribute. 0 (the
  /// default): the format of the group it is created in by Group::create_array, else 3.
  int zarr_format = 0;
  /// @{
  /// The other parts of the chain (see codec::ChainSpec): array -> array filters, several
  /// compressors in order (instead of `compressor`; codec::default_compressors() for zarr-python's
  /// "auto"), and a serializer other than the default bytes / vlen codec.
  std::vector<codec::Any> filters = {};
  std::vector<codec::Any> compressors = {};
  std::optional<codec::Any> serializer = std::nullopt;
  /// @}
  /// 'F': elements stored in Fortran order, as zarr-python 2's order="F" (a Zarr v2 array only;
  /// a v3 array states a transpose filter instead).
  char order = 'C';
  /// @{
  /// A rectilinear grid (chunks of different sizes along a dimension): each dimension's sizes in
  /// order, adding up to the shape, e.g. {{10, 20, 30}, {50, 50}}. `chunk_sizes` gives the chunks
  /// (leave `chunks` empty, no sharding); `shard_sizes` the shards, each a whole number of the
  /// inner `chunks` (leave `shards` unset). Sizes that are regular (all equal but a smaller last)
  /// make a regular grid, as zarr-python writes them.
  std::vector<std::vector<std::int64_t>> chunk_sizes = {};
  std::vector<std::vector<std::int64_t>> shard_sizes = {};
  /// @}
};

/// The metadata Array::create(store, path, spec) writes for `spec`, made without a store: every
/// rule of the spec checked and every codec built, its automatic parameters resolved. Throws what
/// create would (ArgumentError, MetadataError, UnsupportedError naming the field). The CLI and
/// Python check a new array with it before they make anything.
ArrayMetadata array_metadata(const ArraySpec& spec);
/// `meta` as Array::create(store, path, meta) writes it: checked for writing, every codec built
/// (its chunks within the codecs' limits), the codecs' automatic parameters resolved, a v2 array's
/// documents brought in line with its codecs. Throws what create would.
ArrayMetadata checked_for_create(const ArrayMetadata& meta);

/// The elements of a variable-length ("string" / "bytes") selection: its shape and the values in
/// C order (UTF-8 text for "string", any bytes for "bytes").
///
/// `missing` is empty, or holds one flag per value. A read sets it (and leaves the value empty) for
/// the elements no stored chunk holds, on arrays whose missing elements are not of their type
/// (ArrayMetadata::missing_element: a Zarr v2 object array whose fill value is 0 or null, which
/// zarr-python 2 returns as those). A write stores a flagged element as the empty element, as
/// numcodecs stores the missing value; only such arrays take flags.
struct VlenValues {
  Shape shape;                      ///< elements per dimension
  std::vector<std::string> values;  ///< the elements in C order
  std::vector<bool> missing = {};   ///< empty, or a flag per element (see above)
};

/// The elements a read gives: fixed-size ones in an NDArray, variable-length ones as VlenValues
/// (which the array's data type says). More kinds of element take their place here.
using Elements = std::variant<NDArray, VlenValues>;

/// The elements a write or a growth takes, without copying them: a view (or an NDArray) of
/// fixed-size elements, or VlenValues. Converts implicitly from each.
class ElementsRef {
 public:
  /// @{
  /// Refers to `v` or `a` (which must outlive this reference).
  ElementsRef(const NDView& v) : v_(v) {}          // NOLINT(google-explicit-constructor)
  ElementsRef(const NDArray& a) : v_(a.view()) {}  // NOLINT(google-explicit-constructor)
  ElementsRef(const VlenValues& v) : v_(&v) {}     // NOLINT(google-explicit-constructor)
  /// @}
  const NDView* fixed() const { return std::get_if<NDView>(&v_); }  ///< the fixed-size elements, or nullptr
  /// The variable-length elements, or nullptr.
  const VlenValues* vlen() const {
    const auto* p = std::get_if<const VlenValues*>(&v_);
    return p ? *p : nullptr;
  }

 private:
  std::variant<NDView, const VlenValues*> v_;
};

/// How far a long read, write, growth or resize of an Array has come (Array::set_progress).
struct ProgressStep {
  std::int64_t objects = 0;  ///< stored objects (chunks, or shards when sharded) finished or removed
  std::uint64_t bytes = 0;   ///< bytes of the selection's elements they held (decoded); 0 for a removal
};
/// Receives each ProgressStep; called from the worker threads, possibly at once, so it must be
/// thread-safe and quick, and it must not throw (an exception from it fails the operation part
/// way, as a failed chunk write would).
using ProgressCallback = std::function<void(const ProgressStep&)>;

/// A Zarr array in a store: create or open it, read and write any selection (zero-based, or by
/// coordinate through coords()), and grow it at either end. A handle is cheap to copy; it re-reads
/// the metadata when another process has changed it.
class Array {
 public:
  /// @{
  /// Creates an array at `path` of `store` (the store's root without one) as `spec` says; nothing
  /// is written if anything in it is invalid, and an existing node there is an error unless
  /// `spec.overwrite`.
  static Array create(StorePtr store, const std::string& path, const ArraySpec& spec);
  static Array create(StorePtr store, const ArraySpec& spec) { return create(std::move(store), "", spec); }
  /// @}
  /// Creates an array from complete metadata (validated like zarr.json on open), e.g. to copy one.
  static Array create(StorePtr store, const std::string& path, const ArrayMetadata& metadata, bool overwrite = false);
  /// Opens an existing array, validating everything; refuses what it does not understand.
  static Array open(StorePtr store, const std::string& path = "");
  /// @{
  /// Opens the array a URL names: "s3://bucket/path", "http(s)://host/path", "file:///path" or a
  /// plain directory (see zarrpp/store/url.hpp).
  static Array open(const std::string& url);
  static Array open(const char* url) { return open(std::string(url)); }
  /// @}

  Array(const Array&);
  Array& operator=(const Array&);
  Array(Array&&) noexcept;
  Array& operator=(Array&&) noexcept;
  ~Array();

  // ---- description ----
  /// Accessors return values, never references into the current metadata: another thread (or the
  /// next prepend) may replace it at any time.
  Shape shape() const;       ///< elements per dimension
  std::size_t ndim() const;  ///< number of dimensions
  DataType dtype() const;    ///< the elements' data type

  /// The read/write unit (inner chunk when sharded). On a rectilinear grid whose chunks differ in
  /// size: UnsupportedError (read_chunk_sizes says each chunk's size).
  Shape chunks() const;
  /// The shard shape, when sharded (UnsupportedError for rectilinear shards: write_chunk_sizes).
  std::optional<Shape> shards() const;
  /// Whether the grid is `rectilinear` (chunks or shards of sizes listed per dimension).
  bool rectilinear() const;
  int zarr_format() const;  ///< 3 (zarr.json) or 2 (.zarray)
  /// Whether the stored objects are shards (a sharding_indexed codec).
  bool sharded() const;
  /// The number of chunks (inner chunks when sharded) along each dimension (zarr-python's
  /// cdata_shape).
  Shape read_chunk_counts() const;
  /// Each dimension's stored-object sizes as the grid states them, for the objects the shape
  /// reaches: write_chunk_sizes without cutting the last at the array's end (what creates the same
  /// grid again, from index 0: a first chunk starting before index 0 is cut there, a shard to whole
  /// inner chunks).
  std::vector<std::vector<std::int64_t>> grid_sizes() const;
  /// @{
  /// How many elements each chunk holds along each dimension, in order, the first and last cut to
  /// the domain (the grid's answer; nothing else recomputes it): the stored objects (shards when
  /// sharded), `per[d]` of them counted as one (default 1; Dask's `chunks`), within `region` (in
  /// coordinates; default the domain), and the read/write units (inner chunks when sharded).
  /// zarr-python 3's write_chunk_sizes / read_chunk_sizes.
  std::vector<std::vector<std::int64_t>> write_chunk_sizes(const Shape& per = {},
                                                           const std::optional<Domain>& region = std::nullopt) const;
  std::vector<std::vector<std::int64_t>> read_chunk_sizes(const std::optional<Domain>& region = std::nullopt) const;
  /// @}
  /// @{
  /// The fill value's bytes (metadata.hpp's FillValue: an element's bytes, or the text or bytes of a
  /// variable-length one) and its zarr.json form.
  Bytes fill_value() const;
  Json fill_value_json() const;
  /// @}
  ArrayMetadata metadata() const;   ///< the metadata this handle holds now (a copy)
  const std::string& path() const;  ///< the array's path in its store ("" at the root)
  const StorePtr& store() const;    ///< the store the array is in

  /// The domain: per dimension, the first coordinate and one past the last ([-3, 6) after three
  /// elements were prepended to six).
  Domain domain() const;
  Shape lower_bound() const;  ///< the domain's first coordinate per dimension

  /// zarr-python 3's counts: a chunk is the read/write unit (the inner chunk when sharded), a shard
  /// the stored object (the chunk itself when not sharded); see docs/architecture.md's glossary.
  std::int64_t nchunks() const;              ///< chunks in the grid (inner chunks when sharded)
  std::int64_t nshards() const;              ///< stored objects in the grid (shards, or chunks)
  std::int64_t nshards_stored() const;       ///< how many stored objects exist in the store
  std::int64_t nchunks_initialized() const;  ///< nshards_stored() times the chunks per shard

  /// Chunk keys (the spec's name for a stored object's key: a shard's when sharded) of the stored
  /// objects, relative to the store root, in grid order.
  std::vector<std::string> stored_chunk_keys() const;
  /// The store key of the chunk (shard) with the given grid index.
  std::string chunk_key(const std::vector<std::int64_t>& chunk_index) const;
  /// Bytes the array occupies in its store: its metadata and every stored chunk (zarr-python's
  /// nbytes_stored).
  std::uint64_t nbytes_stored() const;

  Json attributes() const;  ///< the user attributes (a JSON object)

  /// Identifies the metadata this handle holds now: it changes whenever that metadata (attributes
  /// included) is replaced, and a value is never reused within the process.
  std::uint64_t generation() const;
  /// Replaces the attributes (atomically, with compare-and-swap on zarr.json).
  void set_attributes(const Json& attributes);
  /// Merges keys into the attributes.
  void update_attributes(const Json& patch);
  /// Removes keys from the attributes as they are stored now (a concurrent writer's other keys stay);
  /// keys that are not there are ignored. Returns the keys it removed.
  std::vector<std::string> remove_attributes(const std::vector<std::string>& keys);

  // ---- settings ----
  /// How many threads this handle reads and writes chunks with (0: zarrpp's default).
  void set_concurrency(std::size_t n);
  std::size_t concurrency() const;  ///< the threads reads and writes use

  /// Reports every stored object a read, write, growth or resize of this handle (and of its
  /// coords(); a copy of the handle starts without one) finishes, and every object a shrinking
  /// resize removes; an empty callback (the default) reports nothing. The callback may run on
  /// several threads at once.
  void set_progress(ProgressCallback callback);
  /// The callback set_progress gave this handle (empty when none), e.g. to give a copy the same.
  ProgressCallback progress() const;

  /// Store chunks that hold only the fill value (default false: such chunks are erased).
  void set_write_empty_chunks(bool on);
  /// Re-reads zarr.json (after another process changed the array).
  void refresh();

  // ---- the one read and the one write ----
  /// @{
  /// `plan` (plan_index, or plan() below) says which elements: orthogonal, points, a mask, NumPy
  /// advanced indexing (read only) or blocks, zero-based or in coordinates. The elements are an
  /// NDArray for fixed-size data types and VlenValues for "string" / "bytes" (UTF-8 checked when
  /// written). A write takes data of the result's shape or any shape NumPy broadcasts to it; a
  /// wrong kind of elements for the data type is SelectionError dtype_mismatch.
  Elements read(const IndexPlan& plan) const;
  void write(const IndexPlan& plan, const ElementsRef& data);
  /// @}
  /// A Selection (integers, slices, 1-d index arrays and masks, each dimension on its own: oindex
  /// semantics) planned on this handle's shape, zero-based.
  IndexPlan plan(const Selection& sel) const;

  // ---- conveniences: orthogonal selections of fixed-size elements ----
  /// Reads an orthogonal selection (zero-based; `{}` is everything) into a new array.
  NDArray read(const Selection& sel = {}) const;
  /// So that a braced list (`read({})`, `read({slice(0, 3), 1})`) is a Selection, not a plan.
  NDArray read(std::initializer_list<DimSelector> sel) const { return read(Selection(sel)); }
  /// read(sel), checking first that the elements are of C++ type T (SelectionError otherwise).
  template <class T>
  NDArray read(const Selection& sel = {}) const {
    check_dtype(dtype_v<T>());
    return read(sel);
  }
  /// Reads into the caller's view (any strides) of the selection's shape.
  void read_into(const Selection& sel, const NDView& out) const;
  /// Writes an array of the selection's shape (any strides) or, with a 0-d array, broadcasts it.
  void write(const Selection& sel, const NDView& data);
  void write(const Selection& sel, const NDArray& data) { write(sel, data.view()); }  ///< write(sel, data.view())

  /// Writes one value of C++ type T to every element of the selection.
  template <class T>
  void write_scalar(const Selection& sel, T value) {
    write(sel, NDView::c_order(&value, dtype_v<T>(), {}));
  }
  /// Writes one value of C++ type T to every element.
  template <class T>
  void fill(T value) {
    write_scalar<T>({}, value);
  }
  /// Selection shape of a basic/orthogonal selection.
  Shape selection_shape(const Selection& sel) const;

  // ---- selections in coordinates ----
  /// The array addressed by coordinates instead of zero-based indices: see Array::Coords.
  class Coords;
  Coords coords() const;  ///< this array addressed by coordinates (see Array::Coords)

  // ---- growth at both ends (regular_bounded and rectilinear_bounded grids) ----
  /// Adds data before index 0 along `axis`; existing chunks never move. Fixed-size or
  /// variable-length elements, as the data type says. A regular grid becomes regular_bounded (a
  /// partly filled first chunk is merged); a rectilinear one becomes rectilinear_bounded, where the
  /// data fills what room the first chunk has and then goes into one new chunk of exactly the rest,
  /// or, with `chunk_size` > 0, chunks of that size with only the one next to the old data smaller
  /// (on sharded arrays sizes are whole inner chunks, so the first inner chunk may be partly filled).
  /// chunk_size applies to rectilinear grids only (ArgumentError otherwise).
  void prepend(const ElementsRef& data, std::size_t axis = 0, std::int64_t chunk_size = 0);
  /// Adds data after the last index along `axis` (on rectilinear grids as prepend does at the front).
  void append(const ElementsRef& data, std::size_t axis = 0, std::int64_t chunk_size = 0);
  /// New shape, keeping the lower bound.
  void resize(const Shape& new_shape);
  /// New domain: lower and upper bounds per dimension, shrinking or growing at either end.
  void resize_domain(const Domain& new_domain);
  /// Adds `before` elements in front of and `after` elements behind the domain along `axis`, as
  /// stored now (growth by others meanwhile is kept), without writing data: the new elements read as
  /// the fill value until written (by coordinates: coords()). Returns the new domain, so the caller
  /// knows where its new elements are: [lower, lower + before) and [upper - after, upper) on `axis`.
  /// Negative counts remove elements at that end instead (their chunks are deleted).
  Domain expand_domain(std::size_t axis, std::int64_t before, std::int64_t after = 0);
  /// Switches the chunk grid in place (only zarr.json changes; no chunk moves): to
  /// "rectilinear_bounded" always (a regular dimension stays a bare size); to "regular_bounded" when
  /// each dimension's chunks that hold the domain have one size; to "regular" / "rectilinear" when,
  /// besides, the domain and the chunks start at 0. ArgumentError naming why otherwise.
  void convert_grid(const std::string& name);
  /// Switches a `regular` grid to `regular_bounded` (origin = lower_bound = 0) without growing.
  void convert_to_regular_bounded();
  /// Switches a `regular_bounded` grid back to `regular` (which every Zarr reader reads), without
  /// moving a chunk: only when its lower bound and origin are 0 everywhere (ArgumentError naming
  /// them otherwise; copy_array into a regular grid re-chunks instead). A regular grid is left as is.
  void convert_to_regular();

  /// The state behind a handle (the library's own).
  struct State;

 private:
  explicit Array(std::shared_ptr<State> st);
  void check_dtype(const DataType& t) const;
  void change_domain(const std::function<Domain(const ArrayMetadata&)>& target);
  void grow(const NDView& data, std::size_t axis, bool front, const std::shared_ptr<VlenHeap>& heap,
            std::int64_t chunk_size);
  void grow_with(const ElementsRef& data, std::size_t axis, bool front, std::int64_t chunk_size);
  std::shared_ptr<State> st_;
};

/// The array addressed in its domain's coordinates, as TensorStore addresses elements: index i is
/// the element at coordinate i whatever the lower bound is now, so a selection means the same
/// elements before and after growth at either end (by this process or another). Zero-based
/// selections (Array::read etc.) start at the lower bound instead, so after a prepend they shift.
///   a.coords().read({slice(-10, 0)})   // the ten elements before coordinate 0
/// Every index and slice bound is a coordinate: negative numbers do not count from the end, a
/// missing slice bound is the domain's bound, and a coordinate outside the domain is refused
/// (SelectionError index_out_of_bounds) — never clamped. Boolean arrays still run over the whole
/// dimension. When a selection falls outside the domain this handle knows, it re-reads the metadata
/// once (another process may have grown the array) before refusing (so does Array::read with a
/// plan in coordinates). Cheap to copy; shares the array's state.
class Array::Coords {
 public:
  /// Reads the elements at the selection's coordinates into a new array.
  NDArray read(const Selection& sel = {}) const;
  /// Reads them into the caller's view (any strides) of the selection's shape.
  void read_into(const Selection& sel, const NDView& out) const;
  /// Writes data of the selection's shape (or a 0-d array, broadcast) at its coordinates.
  void write(const Selection& sel, const NDView& data);
  Shape selection_shape(const Selection& sel) const;  ///< the shape the selection reads

  /// A Selection planned in coordinates (IndexPlan::coords), for Array::read / write: points,
  /// variable-length elements and the rest.
  IndexPlan plan(const Selection& sel) const;

 private:
  friend class Array;
  explicit Coords(std::shared_ptr<State> st) : st_(std::move(st)) {}
  std::shared_ptr<State> st_;
};

/// How a copy runs: whether it replaces a node at the destination, how many threads it uses, and
/// a progress callback.
struct CopyOptions {
  bool overwrite = false;       ///< replace a node at the destination
  std::size_t concurrency = 0;  ///< 0: the default

  /// Called after each destination chunk (shard) is written, from any thread.
  std::function<void(std::int64_t done, std::int64_t total)> progress = nullptr;
};

/// Copies `src` into a new array at `path` of `store` with metadata `meta` (the source's shape,
/// data type and lower bound; its own chunks and codecs). A `regular` grid in `meta` takes any
/// source: the copy's index 0 is the source's first element (its domain's start), re-chunked from
/// there, so a prepended array can go to readers that know only `regular`:
///   copy_array(src, store, "", with_chunk_grid(src.metadata(), "regular")); Refuses (ArgumentError) when the two
/// nodes are the same or one lies inside the other. Only chunks the source stores are visited.
/// The destination's chunks are written first and its zarr.json last; an existing destination
/// (with overwrite) is removed only after the whole source was read. On failure what the copy wrote
/// is removed again.
Array copy_array(const Array& src, const StorePtr& store, const std::string& path, const ArrayMetadata& meta,
                 const CopyOptions& options = {});

/// `m` with the chunk grid named `grid`, of the same chunk shape: "regular" (starting at 0), or
/// "regular_bounded" (a regular grid's origin and lower bound 0; a bounded one kept as it is).
/// ArgumentError for other names.
ArrayMetadata with_chunk_grid(ArrayMetadata m, const std::string& grid);

/// Whether the node at `path_a` of `a` and the one at `path_b` of `b` share storage: the same
/// node, or one inside the other (what the stores say the folders are decides, so bind mounts and
/// symlinks count). Writing one of them may then destroy the other: copies refuse it.
bool nodes_overlap(const Store& a, const std::string& path_a, const Store& b, const std::string& path_b);

/// Before replacing the node at `dst_path` of `dst` with a copy of the node at `src_path` of `src`:
/// whether that could touch the source. nodes_overlap, and — for stores whose identity zarrpp
/// cannot see (a Python mapping over zarr-python's store, a proxy of a dict) — by their contents:
/// a marker key written through `dst` into the destination's folder is looked for through `src`
/// in the source's folder, above it and below it, then removed. Writes nothing through `src`.
/// copy_array and the conversions into another place ask this before an overwrite removes anything.
bool destination_overlaps_source(Store& src, const std::string& src_path, Store& dst, const std::string& dst_path);

/// Removes an array or group: an array's zarr.json and chunks, a group's zarr.json and child
/// nodes; other files under its folder stay. MetadataError, removing nothing, when its zarr.json
/// is too broken to tell what belongs to it.
void remove_node(const StorePtr& store, const std::string& path);

}  // namespace zarrpp
