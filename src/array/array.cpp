// Arrays: creating and opening them, describing them, and reading and writing every kind of
// selection. Growth (prepend, append, resize) is in growth.cpp; running plans in engine.cpp.
#include "zarrpp/array/array.hpp"

#include <algorithm>
#include <cstring>

#include "../core/test_pause.hpp"
#include "../node/node.hpp"
#include "../select/broadcast.hpp"
#include "array_state.hpp"
#include "zarrpp/codec/chain.hpp"
#include "zarrpp/core/checked.hpp"
#include "zarrpp/grid/chunk_grid.hpp"
#include "zarrpp/store/url.hpp"

namespace zarrpp {

// ---- changing zarr.json ---------------------------------------------------------------------------

namespace {
std::string domain_str(const ArrayMetadata& m) { return "domain " + domain_str(m.domain()); }
}  // namespace

// After growth's data work failed (the metadata was not switched): the objects it wrote wholly
// outside the old domain are invisible but take space (a full disk stays full), so they go again.
// Those holding old elements (an edge chunk) are not touched. Says what happened.
std::string Array::State::remove_new_chunks(const Snapshot& cur, const Snapshot& next, const StoreLock* lock) const {
  try {
    if (lock) lock->check();  // without the lock, another grower may own those chunks now
    if (!store->capabilities().listing)
      return "the chunks it wrote outside the domain could not be listed and stay (invisible)";
    // A writer that does not take zarrpp's lock (another program) may have grown the array
    // meanwhile: then those chunks may be its data.
    const auto now = store->get(node::doc_key(path, cur.meta.zarr_format, NodeType::Array), ByteRange::all(),
                                node::kMaxMetadataBytes);
    if (!now || *now != cur.meta_bytes)
      return "the array's metadata changed meanwhile, so the chunks it wrote outside the domain were left (invisible "
             "unless "
             "the new domain holds them)";
    std::vector<std::string> gone;
    for (const auto& [idx, key] : node::list_chunks(*store, path, next.meta.chunk_key_encoding, next.meta.rank())) {
      if (cur.grid.contains_chunk(idx) || !next.grid.contains_chunk(idx)) continue;
      store->erase(key);
      gone.push_back(key);
    }
    node::prune_dirs_of(*store, gone, prefix);
    return gone.empty()
               ? "it left nothing outside the domain"
               : "the " + std::to_string(gone.size()) + " chunk(s) it had written outside the domain were removed";
  } catch (const Error& e) {
    return std::string("removing the chunks it had written outside the domain failed too (") + e.what() +
           "): they are invisible, and the next growth there overwrites them";
  }
}

namespace {
// The metadata but its attributes (which writers without the array's lock may change meanwhile).
std::string beyond_attributes(const ArrayMetadata& m) {
  ArrayMetadata c = m;
  c.attributes = Json::object();
  return c.dump();
}
}  // namespace

// Whether `stored` (zarr.json as read now, under the lock) is `proposed`, the change a write of
// this process proposed, rather than `before` it: then that write took effect though its answer
// said otherwise or was lost. Under the array's lock no other grower changes the domain, so this
// decides. Attributes are not compared: an attribute update may have followed the write.
bool Array::State::landed(const Snapshot& before_change, const Snapshot& proposed, const Snapshot& stored) {
  const std::string want = beyond_attributes(proposed.meta);
  return want != beyond_attributes(before_change.meta) && want == beyond_attributes(stored.meta);
}

std::shared_ptr<const Snapshot> Array::State::parse_stored(const Bytes& bytes, int format, const Json& v2_attrs) const {
  return make_snapshot(node::parse_array(*store, path, bytes, format, v2_attrs), bytes);
}

// After the switch of zarr.json failed with an error under the lock: whether it took effect
// anyway (the request reached the store, its answer was lost) is read back. Returns the stored
// snapshot when it did; throws, saying what is known, when it did not or that is unknown. Must be
// called from the handler of `e` (it rethrows it).
std::shared_ptr<const Snapshot> Array::State::after_failed_switch(const Error& e, const Snapshot& cur,
                                                                  const Snapshot& next, int format,
                                                                  const Json& v2_attrs, const StoreLock* lock) const {
  const std::string unknown = std::string(e.what()) + "; whether the change took effect is unknown: ";
  const std::string kept = "; the chunks it wrote are kept; open the array again to see its domain";
  std::shared_ptr<const Snapshot> now;
  try {
    // Without the lock another grower may have made the same change: then a match proves nothing.
    if (lock) lock->check();
    const auto bytes =
        store->get(node::doc_key(path, format, NodeType::Array), ByteRange::all(), node::kMaxMetadataBytes);
    if (bytes) now = parse_stored(*bytes, format, v2_attrs);
  } catch (const Error& again) {
    throw_like(e, unknown + "it could not be checked (" + again.what() + ")" + kept);
  }
  if (now && landed(cur, next, *now)) return now;
  // The request may still be carried out (a server holding it): the old metadata proves nothing.
  if (dynamic_cast<const UncertainWriteError*>(&e))
    throw_like(e, unknown + "zarr.json still shows the old " + domain_str(cur.meta) +
                      ", but the request may still take effect" + kept);
  if (now && beyond_attributes(now->meta) == beyond_attributes(cur.meta))
    throw_like(e, "not applied; the array is unchanged (" + domain_str(cur.meta) + "): " + e.what() + "; " +
                      remove_new_chunks(cur, next, lock));
  throw;
}

void Array::State::modify(const std::function<ArrayMetadata(const Snapshot&)>& compute,
                          const std::function<void(const Snapshot& cur, const Snapshot& next)>& before,
                          const std::function<void(const Snapshot& cur, const Snapshot& next)>& after) {
  std::unique_ptr<StoreLock> lock;
  if (before || after) {
    if (!store->capabilities().locking)
      throw ConflictError(
          "store " + store->describe() +
          " cannot lock, so growing or resizing the array concurrently could lose data; "
          "growth needs a store with locks (local files, memory, a Python dict, S3 with conditional writes)");
    lock = store->lock(node::meta_key(path));
  }
  // Only where a write's answer can be lost is a refused swap possibly this writer's own: on other
  // stores a refusal means "not written", and what is stored is never taken for its result (another
  // process may have made the same change).
  const bool own_refusals = lock && store->capabilities().uncertain_writes;
  std::shared_ptr<const Snapshot> cur, next;
  const int format = current()->meta.zarr_format;
  const Json v2_attrs = current()->meta.attributes;
  bool data_work_failed = false, switching = false;
  std::string data_done_for;  // the change (before and after) whose data work is done
  const auto change = [&](const std::optional<VersionedBytes>& stored) -> std::optional<Bytes> {
    if (lock) lock->check();
    switching = false;
    auto now = parse_stored(stored->bytes, format, v2_attrs);
    // The previous attempt's write was refused (412) or lost, yet it is what is stored: it took
    // effect (its first copy reached the store). Growing again would apply the change twice.
    if (own_refusals && next && landed(*cur, *next, *now)) {
      next = now;
      return std::nullopt;
    }
    cur = std::move(now);
    if (before) detail::test_pause("growth.read");
    ArrayMetadata m = compute(*cur);
    m.validate_for_write();
    next = make_snapshot(std::move(m), std::nullopt);
    // The data work is done once per change of domain: a swap lost to a writer of attributes
    // (which needs no lock) computes the metadata again, and the same chunks need not be written
    // again. A different domain (a writer that ignores the lock) needs them written anew. Not
    // caught: such a writer changing the domain and back while this swap is pending (its chunks
    // may replace ours unseen); zarrpp's own growers hold the lock, so only programs that ignore
    // it can do that.
    const std::string work = before ? beyond_attributes(cur->meta) + beyond_attributes(next->meta) : std::string();
    if (before && work != data_done_for) {
      data_work_failed = true;
      before(*cur, *next);
      data_work_failed = false;
      data_done_for = work;
    }
    if (lock) lock->check();  // a lease lost during the data work: stop before the switch
    switching = true;
    return next->meta_bytes;
  };
  try {
    node::update(*store, path, change, {.key = node::doc_key(path, format, NodeType::Array)});
  } catch (const Error& e) {
    if (data_work_failed)
      throw_like(e, "not applied; the array is unchanged (" + domain_str(cur->meta) + "): " + e.what() + "; " +
                        remove_new_chunks(*cur, *next, lock.get()));
    if (!switching || !lock || !next) throw;
    next = after_failed_switch(e, *cur, *next, format, v2_attrs, lock.get());
  }
  publish(next);
  node::refresh_consolidated(*store, path);
  if (after) after(*cur, *next);
}

Array::Array(std::shared_ptr<State> st) : st_(std::move(st)) {}
Array::Array(const Array& o) : st_(std::make_shared<State>()) {
  st_->store = o.st_->store;
  st_->path = o.st_->path;
  st_->prefix = o.st_->prefix;
  st_->snap = o.st_->current();
  st_->concurrency = o.st_->concurrency.load();
  st_->write_empty = o.st_->write_empty.load();
}
Array& Array::operator=(const Array& o) {
  if (this != &o) *this = Array(o);
  return *this;
}
Array::Array(Array&&) noexcept = default;
Array& Array::operator=(Array&&) noexcept = default;
Array::~Array() = default;

// ---- creating and opening -------------------------------------------------------------------------

Array Array::create(StorePtr store, const std::string& path_in, const ArraySpec& spec) {
  if (!store) throw ArgumentError("Array::create: no store given");
  return create(std::move(store), path_in, array_metadata(spec), spec.overwrite);
}

Array Array::create(StorePtr store, const std::string& path_in, const ArrayMetadata& meta, bool overwrite) {
  if (!store) throw ArgumentError("Array::create: no store given");
  const std::string path = normalize_node_path(path_in);
  // Everything (every codec included) is validated before anything is written.
  const ArrayMetadata m = checked_for_create(meta);
  if (m.zarr_format == 3) validate_v3_node_path(path);
  auto snap = make_snapshot(m, std::nullopt);
  // What we write must parse back, through the reader that will open it.
  node::parse_array(*store, path, snap->meta_bytes, m.zarr_format, m.attributes);

  const int replaced = node::prepare_create(*store, path, overwrite, &snap->meta, m.zarr_format);
  node::write_array_documents(*store, path, snap->meta, snap->meta_bytes, replaced);
  auto st = std::make_shared<State>();
  st->store = std::move(store);
  st->path = path;
  st->prefix = node::prefix_of(path);
  st->snap = snap;
  return Array(st);
}

Array Array::open(StorePtr store, const std::string& path_in) {
  if (!store) throw ArgumentError("Array::open: no store given");
  const std::string path = normalize_node_path(path_in);
  auto st = std::make_shared<State>();
  st->store = std::move(store);
  st->path = path;
  st->prefix = node::prefix_of(path);
  st->snap = load_snapshot(*st->store, path);
  return Array(st);
}

Array Array::open(const std::string& url) {
  return open(open_store(url, OpenStoreOptions{.file = FileStore::Options{.create = false}}));
}

void Array::refresh() { st_->publish(load_snapshot(*st_->store, st_->path)); }

// ---- description ----------------------------------------------------------------------------------

Shape Array::shape() const { return st_->current()->meta.shape; }
std::size_t Array::ndim() const { return st_->current()->meta.rank(); }
DataType Array::dtype() const { return st_->current()->meta.data_type; }
Shape Array::chunks() const { return st_->current()->unit_grid.chunk_shape(); }
std::optional<Shape> Array::shards() const {
  auto s = st_->current();
  if (!s->layout) return std::nullopt;
  return s->grid.chunk_shape();
}
bool Array::sharded() const { return st_->current()->layout.has_value(); }
Shape Array::read_chunk_counts() const {
  const auto s = st_->current();
  Shape out;
  for (std::size_t d = 0; d < s->unit_grid.rank(); ++d) out.push_back(s->unit_grid.num_chunks(d));
  return out;
}
std::vector<std::vector<std::int64_t>> Array::grid_sizes() const {
  const auto s = st_->current();
  return s->grid.sizes_from_zero(s->layout ? s->layout->unit_shape : Shape{});
}
bool Array::rectilinear() const { return st_->current()->meta.chunk_grid.rectilinear(); }
int Array::zarr_format() const { return st_->current()->meta.zarr_format; }
Bytes Array::fill_value() const { return st_->current()->meta.fill_value.bytes; }
Json Array::fill_value_json() const {
  auto s = st_->current();
  return fill_value_to_json(s->meta.fill_value.bytes, s->meta.data_type);
}
ArrayMetadata Array::metadata() const { return st_->current()->meta; }
const std::string& Array::path() const { return st_->path; }
const StorePtr& Array::store() const { return st_->store; }
Json Array::attributes() const { return st_->current()->meta.attributes; }
std::uint64_t Array::generation() const { return st_->current()->generation; }
void Array::set_concurrency(std::size_t n) { st_->concurrency = std::max<std::size_t>(n, 1); }
std::size_t Array::concurrency() const { return st_->concurrency; }
void Array::set_write_empty_chunks(bool on) { st_->write_empty = on; }
void Array::set_progress(ProgressCallback callback) {
  std::lock_guard lk(st_->mu);
  st_->progress = callback ? std::make_shared<const ProgressCallback>(std::move(callback)) : nullptr;
}
ProgressCallback Array::progress() const {
  const auto p = st_->progress_callback();
  return p ? *p : ProgressCallback();
}
void Array::check_dtype(const DataType& t) const {
  if (!(t == dtype()))
    throw SelectionError(ErrorCode::dtype_mismatch,
                         "data type mismatch: array holds " + dtype().name() + ", requested " + t.name());
}

Domain Array::domain() const { return st_->current()->meta.domain(); }

namespace {
// The sizes of `grid`'s chunks per dimension, `per[d]` at a time, within `region` (coordinates).
std::vector<std::vector<std::int64_t>> chunk_sizes_of(const char* what, const ArrayMetadata& m, const ChunkGrid& grid,
                                                      const Shape& per, const std::optional<Domain>& region) {
  const std::size_t r = m.rank();
  if ((!per.empty() && per.size() != r) || (region && region->size() != r))
    throw ArgumentError(std::string(what) + ": " + std::to_string(region ? region->size() : per.size()) +
                        " values given for a " + std::to_string(r) + "-d array");
  const Domain dom = m.domain();
  std::vector<std::vector<std::int64_t>> out;
  for (std::size_t d = 0; d < r; ++d) {
    const DimDomain want = region ? (*region)[d] : dom[d];
    if (want.inclusive_min < dom[d].inclusive_min || want.exclusive_max > dom[d].exclusive_max ||
        want.inclusive_min > want.exclusive_max)
      throw SelectionError(ErrorCode::index_out_of_bounds,
                           std::string(what) + ": region " + zarrpp::domain_str(Domain{want}) + " of dimension " +
                               std::to_string(d) + " is outside the domain " + zarrpp::domain_str(Domain{dom[d]}));
    out.push_back(grid.chunk_sizes(d, per.empty() ? 1 : per[d], want.inclusive_min - dom[d].inclusive_min,
                                   want.exclusive_max - dom[d].inclusive_min));
  }
  return out;
}
}  // namespace

std::vector<std::vector<std::int64_t>> Array::write_chunk_sizes(const Shape& per,
                                                                const std::optional<Domain>& region) const {
  const auto s = st_->current();
  return chunk_sizes_of("write_chunk_sizes", s->meta, s->grid, per, region);
}

std::vector<std::vector<std::int64_t>> Array::read_chunk_sizes(const std::optional<Domain>& region) const {
  const auto s = st_->current();
  return chunk_sizes_of("read_chunk_sizes", s->meta, s->unit_grid, {}, region);
}
Shape Array::lower_bound() const { return st_->current()->meta.chunk_grid.lower_bound; }
std::int64_t Array::nchunks() const { return st_->current()->unit_grid.total_chunks(); }
std::int64_t Array::nshards() const { return st_->current()->grid.total_chunks(); }

std::string Array::chunk_key(const std::vector<std::int64_t>& idx) const {
  auto s = st_->current();
  return st_->prefix + s->meta.chunk_key_encoding.encode(idx);
}

std::vector<std::string> Array::stored_chunk_keys() const {
  auto s = st_->current();
  std::vector<std::pair<std::vector<std::int64_t>, std::string>> found;
  for (auto& [idx, key] : node::list_chunks(*st_->store, st_->path, s->meta.chunk_key_encoding, s->meta.rank()))
    if (s->grid.contains_chunk(idx)) found.emplace_back(std::move(idx), std::move(key));
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

std::int64_t Array::nshards_stored() const { return static_cast<std::int64_t>(stored_chunk_keys().size()); }

std::int64_t Array::nchunks_initialized() const {
  const auto s = st_->current();
  if (!s->objects || !s->layout) {
    const auto per_shard = checked::product(s->units_per_shard, "chunks per shard");
    return checked::mul(nshards_stored(), per_shard, "nchunks_initialized");
  }
  // Shards of a rectilinear grid hold different numbers of inner chunks.
  std::int64_t n = 0;
  for (auto& [idx, key] : node::list_chunks(*st_->store, st_->path, s->meta.chunk_key_encoding, s->meta.rank()))
    if (s->grid.contains_chunk(idx))
      n = checked::add(n, checked::product(s->object(idx).units_per_shard, "chunks per shard"), "nchunks_initialized");
  return n;
}

std::uint64_t Array::nbytes_stored() const {
  std::uint64_t n = st_->current()->meta_bytes.size();
  for (const auto& k : stored_chunk_keys())
    if (auto b = st_->store->size(k)) n += *b;  // sizes only: nothing is downloaded
  return n;
}

namespace {
// Every change of an array's attributes: a v2 array's live in .zattrs, changed by compare-and-swap
// on it alone; a v3 array's in zarr.json.
void change_attributes(Array::State& st, const std::function<Json(const Json&)>& change);
}  // namespace

void Array::set_attributes(const Json& attributes) { change_attributes(*st_, node::replacing_attributes(attributes)); }

void Array::update_attributes(const Json& patch) { change_attributes(*st_, node::merging_attributes(patch)); }

std::vector<std::string> Array::remove_attributes(const std::vector<std::string>& keys) {
  std::vector<std::string> removed;
  change_attributes(*st_, node::removing_attributes(keys, removed));
  return removed;
}

namespace {
void change_attributes(Array::State& st, const std::function<Json(const Json&)>& change) {
  if (st.current()->meta.zarr_format == 3) {
    st.modify(
        [&](const Snapshot& cur) {
          ArrayMetadata m = cur.meta;
          m.attributes = change(m.attributes);
          return m;
        },
        nullptr, nullptr);
    return;
  }
  const Json attrs = node::update_v2_attributes(*st.store, st.path, change);
  auto cur = st.current();
  ArrayMetadata m = cur->meta;
  m.attributes = attrs;
  st.publish(make_snapshot(std::move(m), cur->meta_bytes));
  node::refresh_consolidated(*st.store, st.path);
}
}  // namespace

// ---- selections -----------------------------------------------------------------------------------

namespace {
void check_out_view(const NDView& out, const Shape& shape, const DataType& dtype) {
  if (!(out.dtype().holds_same_elements(dtype)))
    throw SelectionError(ErrorCode::dtype_mismatch, "data type mismatch: array holds " + dtype.name() +
                                                        ", output buffer is " + out.dtype().name());
  if (out.shape() != shape)
    throw SelectionError(ErrorCode::shape_mismatch, "output buffer of shape " + shape_str(out.shape()) +
                                                        " does not match the selection's shape " + shape_str(shape));
}
}  // namespace

Shape Array::selection_shape(const Selection& sel) const {
  auto s = st_->current();
  Shape out;
  for (const auto& d : normalize_selection(sel, s->meta.shape))
    if (!d.dropped()) out.push_back(d.size());
  return out;
}

// Every read runs a plan into a new output (every element written by the plan, so it is not
// zeroed first) or into the caller's view; every write runs a plan from broadcast data.
namespace {
// Variable-length elements go through snapshots that carry a heap (Array::read / write with VlenValues).
void require_fixed(const Snapshot& s) {
  if (s.meta.data_type.is_vlen() && !s.unit_spec.heap)
    throw SelectionError(ErrorCode::dtype_mismatch, "the array holds variable-length " + s.meta.data_type.name() +
                                                        " elements: read and write them as VlenValues through a plan "
                                                        "(Array::read / write with Array::plan; Python: arrays of "
                                                        "str/bytes objects)");
}
NDArray read_new(const Engine& e, const Plan& plan) {
  require_fixed(e.s);
  NDArray out = NDArray::uninitialized(e.s.meta.data_type, plan.out_shape);
  detail::prefault(out.raw_data(), out.nbytes(), e.concurrency);
  e.read(plan, out.view());
  return out;
}
// The caller's buffer may be freshly allocated (new[], NumPy): its pages are then faulted in by
// all threads at once, as read_new does for its own output, instead of one by one as they are
// filled (prefault_if_fresh says when).
void read_existing(const Engine& e, const Plan& plan, const NDView& out) {
  if (out.is_c_contiguous())
    detail::prefault_if_fresh(out.data(), static_cast<std::size_t>(out.size()) * out.dtype().size(), e.concurrency);
  e.read(plan, out);
}
void write_plan(const Engine& e, const Plan& plan, const NDView& data) {
  require_fixed(e.s);
  e.write(plan, broadcast_to(data, plan.out_shape, e.s.meta.data_type));
}

// ---- variable-length elements ----
std::shared_ptr<VlenHeap> new_heap(const Snapshot& s) { return std::make_shared<VlenHeap>(s.meta.fill_text()); }

// Index 0 is the fill value: what missing chunks read as (decoded elements all have an index of
// their own). Where that is not of the data type (ArrayMetadata::missing_element), it is flagged.
VlenValues from_indices(const NDArray& idx, const VlenHeap& heap, const ArrayMetadata& m) {
  VlenValues out;
  out.shape = idx.shape();
  const auto n = static_cast<std::size_t>(idx.size());
  const std::span<const std::uint64_t> at(reinterpret_cast<const std::uint64_t*>(idx.raw_data()), n);
  const auto items = heap.get(at);
  out.values.reserve(n);
  for (const auto* p : items) out.values.push_back(*p);
  if (m.missing_element() && std::find(at.begin(), at.end(), 0) != at.end()) {
    out.missing.resize(n);
    for (std::size_t i = 0; i < n; ++i) out.missing[i] = at[i] == 0;
  }
  return out;
}

// The values as indices into `heap` (those equal to the fill value as 0, so chunks holding only
// the fill value are recognised as such), in an array of the vlen data type.
NDArray to_indices(const VlenValues& data, const Snapshot& s, VlenHeap& heap) {
  const auto n = shape_size(data.shape);
  if (static_cast<std::size_t>(n) != data.values.size())
    throw SelectionError(ErrorCode::shape_mismatch, "variable-length data: shape " + shape_str(data.shape) + " holds " +
                                                        std::to_string(n) + " values, " +
                                                        std::to_string(data.values.size()) + " given");
  if (!s.meta.data_type.is_vlen())
    throw SelectionError(ErrorCode::dtype_mismatch,
                         "the array holds " + s.meta.data_type.name() + ", not variable-length elements");
  if (!data.missing.empty() && data.missing.size() != data.values.size())
    throw SelectionError(ErrorCode::shape_mismatch, "variable-length data: " + std::to_string(data.missing.size()) +
                                                        " missing flags for " + std::to_string(data.values.size()) +
                                                        " values");
  const auto flagged = [&](std::size_t i) { return !data.missing.empty() && data.missing[i]; };
  if (!s.meta.missing_element() && std::find(data.missing.begin(), data.missing.end(), true) != data.missing.end())
    throw SelectionError(ErrorCode::dtype_mismatch,
                         "the array's missing elements read as its fill value: give that value, not a missing "
                         "element (only Zarr v2 object arrays whose fill value is not of their type have them)");
  if (s.meta.data_type == DataType::string_t)
    for (std::size_t i = 0; i < data.values.size(); ++i)
      if (!flagged(i) && !is_valid_utf8(data.values[i]))
        throw SelectionError(ErrorCode::dtype_mismatch,
                             "value " + std::to_string(i) + " is not valid UTF-8 text, which a string array holds");
  const std::string fill = s.meta.fill_text();
  std::vector<std::string> fresh;
  std::vector<std::uint64_t> idx(data.values.size(), 0);
  for (std::size_t i = 0; i < data.values.size(); ++i)
    if (!flagged(i) && data.values[i] != fill) {
      idx[i] = fresh.size() + 1;  // rebased below
      fresh.push_back(data.values[i]);
    }
  const std::uint64_t first = heap.add(std::move(fresh));
  NDArray out(s.meta.data_type, data.shape);
  auto* p = reinterpret_cast<std::uint64_t*>(out.raw_data());
  for (std::size_t i = 0; i < idx.size(); ++i) p[i] = idx[i] ? first + idx[i] - 1 : 0;
  return out;
}
}  // namespace

// ---- the one read and the one write ---------------------------------------------------------------

namespace {
// A coordinate selection resolved on the snapshot it runs on: the handle's, or, when the selection
// falls outside the domain it knows, the array's metadata as stored now (another process may have
// grown it). `resolve` throws SelectionError index_out_of_bounds for a selection outside a domain;
// the second time, that is the answer. Resolved once per snapshot (a plan of millions of points is
// not cheap).
template <class F>
auto in_domain(Array::State& st, F&& resolve)
    -> std::pair<std::shared_ptr<const Snapshot>, decltype(resolve(*st.current()))> {
  auto s = st.current();
  try {
    return {s, resolve(*s)};
  } catch (const SelectionError& e) {
    if (e.code() != ErrorCode::index_out_of_bounds) throw;
  }
  st.publish(load_snapshot(*st.store, st.path));
  s = st.current();
  return {s, resolve(*s)};
}

std::vector<DimSel> in_coords(const Selection& sel, const Snapshot& s) {
  return normalize_selection(sel, s.meta.shape, &s.meta.chunk_grid.lower_bound);
}
Coordinates in_coords(const Coordinates& c, const Snapshot& s) {
  return normalize_coordinates(c, s.meta.shape, &s.meta.chunk_grid.lower_bound);
}

NDView mask_view(const IndexPlan& p) { return NDView::c_order(p.mask.values.data(), DataType::bool_t, p.mask.shape); }

// What the engine runs for a plan on snapshot `s`: the units it touches and where elements go.
Plan engine_plan(const IndexPlan& p, const Snapshot& s) {
  switch (p.kind) {
    case IndexPlan::Kind::points:
      return plan_points(p.coords ? in_coords(p.points, s) : normalize_coordinates(p.points, s.meta.shape),
                         s.unit_grid);
    case IndexPlan::Kind::mask:
      return plan_points(mask_to_coordinates(mask_view(p), s.meta.shape), s.unit_grid);
    case IndexPlan::Kind::blocks:
      return plan_orthogonal(normalize_block_selection(p.selection, s.grid), s.unit_grid);
    case IndexPlan::Kind::orthogonal:
    case IndexPlan::Kind::gather:
      break;
  }
  return plan_orthogonal(p.coords ? in_coords(p.selection, s) : normalize_selection(p.selection, s.meta.shape),
                         s.unit_grid);
}

// A plan made the engine's on the snapshot it runs on (in coordinates: see in_domain).
struct Planned {
  std::shared_ptr<const Snapshot> s;
  Plan plan;
};
Planned planned(Array::State& st, const IndexPlan& p) {
  if (!p.coords) {
    auto s = st.current();
    if (p.planned_shape && *p.planned_shape != s->meta.shape)
      throw ConflictError(ErrorCode::conflict, "the selection was planned on the array's shape " +
                                                   shape_str(*p.planned_shape) + ", and the array's shape is " +
                                                   shape_str(s->meta.shape) +
                                                   " now (it grew or shrank since): plan it again");
    return {s, engine_plan(p, *s)};
  }
  auto [s, plan] = in_domain(st, [&](const Snapshot& x) { return engine_plan(p, x); });
  return {std::move(s), std::move(plan)};
}

// A mask that selects nothing (a 0-d false mask has no points to say so).
bool selects_nothing(const IndexPlan& p) { return p.kind == IndexPlan::Kind::mask && p.shape == Shape{0}; }

// The elements of a plan (variable-length ones as indices into the snapshot's heap). `s` may be
// the planned snapshot bound to a heap: the grid is the same.
NDArray run_read(const Array::State& st, const Snapshot& s, const IndexPlan& p, const Plan& plan) {
  if (selects_nothing(p)) return NDArray(s.meta.data_type, p.shape);
  NDArray r = read_new(st.engine(s), plan);
  if (p.kind == IndexPlan::Kind::points || p.kind == IndexPlan::Kind::mask) r.reshape(p.shape);
  if (p.kind != IndexPlan::Kind::gather) return r;
  // NumPy advanced indexing: the box was read; pick each result element from it.
  NDArray out = NDArray::uninitialized(r.dtype(), p.shape);
  const std::size_t item = r.dtype().size();
  for (std::size_t k = 0; k < p.gather.size(); ++k)
    std::memcpy(out.raw_data() + k * item, r.raw_data() + static_cast<std::size_t>(p.gather[k]) * item, item);
  return out;
}

[[noreturn]] void refuse_gather_write() {
  throw SelectionError(ErrorCode::invalid_index,
                       "assigning through integer arrays mixed with slices or other arrays is not supported (NumPy's "
                       "rules for it differ from an orthogonal selection): use oindex (orthogonal) or vindex "
                       "(coordinates)");
}

// Writes elements (fixed-size, or the indices of variable-length ones) through a plan.
void run_write(const Array::State& st, const Snapshot& s, const IndexPlan& p, const Plan& plan, const NDView& data) {
  if (p.kind != IndexPlan::Kind::points && p.kind != IndexPlan::Kind::mask) return write_plan(st.engine(s), plan, data);
  // Points and masks: the data in the result's shape, then one element per point.
  require_fixed(s);
  const NDArray v = NDArray::copy_of(broadcast_to(data, p.shape, s.meta.data_type));
  if (selects_nothing(p)) return;
  write_plan(st.engine(s), plan, NDView::c_order(v.raw_data(), v.dtype(), {v.size()}));
}
}  // namespace

Elements Array::read(const IndexPlan& p) const {
  const auto [s, plan] = planned(*st_, p);
  if (!s->meta.data_type.is_vlen()) return run_read(*st_, *s, p, plan);
  auto heap = new_heap(*s);
  auto hs = with_heap(*s, heap);
  return from_indices(run_read(*st_, *hs, p, plan), *heap, s->meta);
}

void Array::write(const IndexPlan& p, const ElementsRef& data) {
  if (p.advanced || p.kind == IndexPlan::Kind::gather) refuse_gather_write();
  const auto [s, plan] = planned(*st_, p);
  if (const auto* fixed = data.fixed()) return run_write(*st_, *s, p, plan, *fixed);
  auto heap = new_heap(*s);
  auto hs = with_heap(*s, heap);
  const NDArray idx = to_indices(*data.vlen(), *hs, *heap);
  run_write(*st_, *hs, p, plan, idx.view());
}

IndexPlan Array::plan(const Selection& sel) const {
  return plan_index(index_expr(sel), shape(), IndexMode::orthogonal);
}

void Array::prepend(const ElementsRef& data, std::size_t axis, std::int64_t chunk_size) {
  grow_with(data, axis, true, chunk_size);
}
void Array::append(const ElementsRef& data, std::size_t axis, std::int64_t chunk_size) {
  grow_with(data, axis, false, chunk_size);
}

void Array::grow_with(const ElementsRef& data, std::size_t axis, bool front, std::int64_t chunk_size) {
  if (const auto* fixed = data.fixed()) return grow(*fixed, axis, front, nullptr, chunk_size);
  auto s = st_->current();
  auto heap = new_heap(*s);
  const NDArray idx = to_indices(*data.vlen(), *s, *heap);
  grow(idx.view(), axis, front, heap, chunk_size);
}

// ---- conveniences: orthogonal selections ------------------------------------------------------------

NDArray Array::read(const Selection& sel) const {
  auto s = st_->current();
  return read_new(st_->engine(*s), plan_orthogonal(normalize_selection(sel, s->meta.shape), s->unit_grid));
}

void Array::read_into(const Selection& sel, const NDView& out) const {
  auto s = st_->current();
  require_fixed(*s);
  const auto plan = plan_orthogonal(normalize_selection(sel, s->meta.shape), s->unit_grid);
  check_out_view(out, plan.out_shape, s->meta.data_type);
  read_existing(st_->engine(*s), plan, out);
}

void Array::write(const Selection& sel, const NDView& data) {
  auto s = st_->current();
  write_plan(st_->engine(*s), plan_orthogonal(normalize_selection(sel, s->meta.shape), s->unit_grid), data);
}

// ---- selections in coordinates ----------------------------------------------------------------------

Array::Coords Array::coords() const { return Coords(st_); }

Shape Array::Coords::selection_shape(const Selection& sel) const {
  const auto [s, dims] = in_domain(*st_, [&](const Snapshot& x) { return in_coords(sel, x); });
  Shape out;
  for (const auto& d : dims)
    if (!d.dropped()) out.push_back(d.size());
  return out;
}

IndexPlan Array::Coords::plan(const Selection& sel) const {
  return plan_index(index_expr(sel), st_->current()->meta.shape, IndexMode::orthogonal, true);
}

NDArray Array::Coords::read(const Selection& sel) const {
  const auto [s, dims] = in_domain(*st_, [&](const Snapshot& x) { return in_coords(sel, x); });
  return read_new(st_->engine(*s), plan_orthogonal(dims, s->unit_grid));
}

void Array::Coords::read_into(const Selection& sel, const NDView& out) const {
  const auto [s, dims] = in_domain(*st_, [&](const Snapshot& x) { return in_coords(sel, x); });
  require_fixed(*s);
  const auto plan = plan_orthogonal(dims, s->unit_grid);
  check_out_view(out, plan.out_shape, s->meta.data_type);
  read_existing(st_->engine(*s), plan, out);
}

void Array::Coords::write(const Selection& sel, const NDView& data) {
  const auto [s, dims] = in_domain(*st_, [&](const Snapshot& x) { return in_coords(sel, x); });
  write_plan(st_->engine(*s), plan_orthogonal(dims, s->unit_grid), data);
}

void remove_node(const StorePtr& store, const std::string& path_in) {
  const std::string path = normalize_node_path(path_in);
  node::remove_owned(*store, path);
  node::refresh_consolidated(*store, path);
}

}  // namespace zarrpp
