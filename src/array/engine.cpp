// Running plans: each stored object a plan touches is read or written once, by the codec layer,
// with the array layer saying which units it needs and where their elements go.
#include "engine.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

#include "../core/buffer_ops.hpp"
#include "../core/retry.hpp"
#include "../core/waiting_threads.hpp"
#include "../node/node.hpp"
#include "../select/scatter.hpp"
#include "../select/task_batches.hpp"
#include "commit.hpp"
#include "index_cache.hpp"
#include "zarrpp/core/checked.hpp"
#include "zarrpp/core/thread_pool.hpp"

namespace zarrpp {

// Bytes of re-encoded objects a write holds before writing any (see Engine::write).
constexpr std::uint64_t kWriteWorkingSet = std::uint64_t{256} << 20;
// Commits a write keeps waiting on a remote store at once, at most (see Engine::write_batch).
constexpr std::uint64_t kMaxWaitingCommits = 128;

namespace {
// A rectilinear grid of shards: every shard size must be a whole number of inner chunks (the
// sharding codec's rule for each shard), so the inner chunks form one regular grid.
void check_rectilinear_shards(const Snapshot& s) {
  if (!s.layout) return;
  const auto sizes = s.meta.chunk_grid.distinct_sizes();
  for (std::size_t d = 0; d < sizes.size(); ++d)
    for (const auto n : sizes[d])
      if (n % s.layout->unit_shape[d] != 0)
        throw MetadataError("chunk_grid: shard size " + std::to_string(n) + " of dimension " + std::to_string(d) +
                            " is not divisible by the shard's inner chunk size " +
                            std::to_string(s.layout->unit_shape[d]));
}
}  // namespace

std::shared_ptr<const Snapshot> make_snapshot(ArrayMetadata meta, std::optional<Bytes> stored,
                                              const std::shared_ptr<VlenHeap>& heap) {
  auto s = std::make_shared<Snapshot>();
  s->generation = node::next_generation();
  s->meta = std::move(meta);
  s->grid = ChunkGrid::from_metadata(s->meta);
  const Bytes fill = s->meta.fill_element();
  const ChunkSpec storage_spec{s->meta.chunk_grid.chunk_shape, s->meta.data_type, fill, heap};
  s->pipeline = CodecPipeline::from_metadata(s->meta.codecs, storage_spec);
  s->layout = unit_layout(s->pipeline);
  s->max_stored = max_stored_size(s->pipeline);
  if (s->layout) {
    // Inner chunks are regular from a shard boundary (every shard holds whole inner chunks).
    s->unit_grid = ChunkGrid(s->meta.shape, s->layout->unit_shape, s->grid.origin(), s->meta.chunk_grid.lower_bound);
    s->unit_spec = ChunkSpec{s->layout->unit_shape, s->meta.data_type, fill, heap};
    s->units_per_shard = s->layout->units_per_shard;
  } else {
    s->unit_grid = s->grid;
    s->unit_spec = storage_spec;
    s->units_per_shard.assign(s->meta.rank(), 1);
  }
  s->meta_bytes = stored ? std::move(*stored) : node::to_bytes(s->meta.dump());
  if (!s->grid.is_regular()) {
    check_rectilinear_shards(*s);
    s->objects = std::make_shared<Snapshot::ObjectCache>();
  }
  return s;
}

struct Snapshot::ObjectCache {
  struct Entry {
    CodecPipeline pipeline;
    ChunkSpec unit_spec;
    Shape units_per_shard;
    std::uint64_t max_stored = kNoLimit;
  };
  // Bounded: a grid whose every chunk has its own shape would otherwise keep a pipeline per chunk
  // for the snapshot's life. Entries in use stay alive through ObjectCodec::keep.
  static constexpr std::size_t kMaxEntries = 1024;
  std::mutex mutex;
  std::map<Shape, std::shared_ptr<Entry>> by_shape;
};

ObjectCodec Snapshot::object(std::span<const std::int64_t> storage) const {
  if (!objects) return ObjectCodec{&pipeline, &unit_spec, units_per_shard, max_stored, nullptr};
  Shape shape = grid.chunk_shape_at(storage);
  std::lock_guard lock(objects->mutex);
  if (objects->by_shape.size() >= ObjectCache::kMaxEntries && !objects->by_shape.count(shape))
    objects->by_shape.clear();
  auto& e = objects->by_shape[shape];
  if (!e) {
    e = std::make_shared<ObjectCache::Entry>();
    e->pipeline = CodecPipeline::from_metadata(meta.codecs,
                                               ChunkSpec{shape, meta.data_type, unit_spec.fill_value, unit_spec.heap});
    e->max_stored = max_stored_size(e->pipeline);
    if (const auto l = unit_layout(e->pipeline)) {
      e->unit_spec = unit_spec;
      e->units_per_shard = l->units_per_shard;
    } else {
      e->unit_spec = ChunkSpec{shape, meta.data_type, unit_spec.fill_value, unit_spec.heap};
      e->units_per_shard.assign(shape.size(), 1);
    }
  }
  return ObjectCodec{&e->pipeline, &e->unit_spec, e->units_per_shard, e->max_stored, e};
}

std::vector<std::int64_t> Snapshot::first_unit(std::span<const std::int64_t> storage) const {
  std::vector<std::int64_t> out(storage.size());
  for (std::size_t d = 0; d < storage.size(); ++d)
    out[d] = objects ? unit_grid.locate(d, grid.chunk_start_index(d, storage[d])).chunk
                     : checked::mul(storage[d], units_per_shard[d], "unit index");
  return out;
}

std::vector<std::int64_t> Snapshot::storage_of(std::span<const std::int64_t> unit) const {
  std::vector<std::int64_t> out(unit.size());
  for (std::size_t d = 0; d < unit.size(); ++d) out[d] = storage_index(d, unit[d]);
  return out;
}

StorageIndex Snapshot::storage_indexer() const {
  if (!layout) return {};
  return [this](std::size_t d, std::int64_t unit) { return storage_index(d, unit); };
}

std::int64_t Snapshot::storage_index(std::size_t d, std::int64_t unit) const {
  return objects ? grid.locate(d, unit_grid.chunk_start_index(d, unit)).chunk
                 : checked::floor_div(unit, units_per_shard[d]);
}

std::shared_ptr<const Snapshot> with_heap(const Snapshot& s, const std::shared_ptr<VlenHeap>& heap) {
  return make_snapshot(s.meta, s.meta_bytes, heap);
}

std::shared_ptr<const Snapshot> load_snapshot(Store& store, const std::string& path) {
  auto doc = node::read_array(store, path);
  return make_snapshot(std::move(doc.meta), std::move(doc.stored));
}

namespace {

// ---- which stored object holds which units -------------------------------------------------------

// The bytes of the selection's elements in one stored object's tasks (what progress reports).
std::uint64_t group_bytes(const Plan& plan, const TaskBatch& b, const ObjectTasks& g, std::size_t item_size) {
  std::uint64_t n = 0;
  for (const std::size_t ti : g.tasks) {
    const ChunkTask& t = b.tasks[ti];
    std::uint64_t e = plan.points ? t.points.size() : 1;
    for (const DimChunkMap* m : t.dims) e *= static_cast<std::uint64_t>(m->count);
    n += e;
  }
  return n * item_size;
}

// C-order index of a unit inside its stored object, whose first unit is `first` and which holds
// `per` units along each dimension.
std::size_t unit_index(const std::vector<std::int64_t>& unit, const std::vector<std::int64_t>& first,
                       const Shape& per) {
  std::size_t f = 0;
  for (std::size_t d = 0; d < unit.size(); ++d)
    f = f * static_cast<std::size_t>(per[d]) + static_cast<std::size_t>(unit[d] - first[d]);
  return f;
}
// How many units of the stored object `storage` hold elements of the domain.
std::uint64_t units_in_domain(const Snapshot& s, const std::vector<std::int64_t>& storage) {
  const auto first = s.first_unit(storage);
  const Shape& per = s.object(storage).units_per_shard;
  std::uint64_t n = 1;
  for (std::size_t d = 0; d < storage.size(); ++d) {
    const std::int64_t lo = std::max(first[d], s.unit_grid.first_chunk(d));
    const std::int64_t hi = std::min(first[d] + per[d], s.unit_grid.first_chunk(d) + s.unit_grid.num_chunks(d));
    n *= static_cast<std::uint64_t>(std::max<std::int64_t>(hi - lo, 0));
  }
  return n;
}
// Whether a unit holds any element of the domain.
bool unit_intersects_domain(const ChunkGrid& g, const std::vector<std::int64_t>& unit) {
  for (std::size_t d = 0; d < unit.size(); ++d) {
    const auto [a, b] = g.index_range(d, unit[d]);
    if (a >= b) return false;
  }
  return true;
}

// ---- reading ----------------------------------------------------------------------------------------

// Copies decoded units to the caller's output, and the fill value for missing ones. One copier
// per request, set up when its first piece arrives (requests are decoded on several threads, but
// each by one at a time).
class ReadSink final : public UnitSink {
 public:
  ReadSink(const Plan& plan, const TaskBatch& b, const ObjectTasks& g, const ChunkSpec& spec, const NDView& out)
      : plan_(plan), b_(b), g_(g), spec_(spec), out_(out), copiers_(g.tasks.size()) {}

  void missing(std::size_t i) override { fill_task(plan_, task(i), spec_, out_); }

  void decoded(std::size_t i, std::int64_t first, std::int64_t end, const std::uint8_t* data) override {
    auto& c = copiers_[i];
    if (!c) c = std::make_unique<TaskCopier>(plan_, task(i), spec_, out_, false);
    const std::int64_t slabs = spec_.shape.empty() ? 1 : spec_.shape[0];
    auto* chunk = reinterpret_cast<std::byte*>(const_cast<std::uint8_t*>(data));
    if (first == 0 && end == slabs)
      c->copy(chunk);
    else
      c->copy_slabs(first, end, chunk);
  }

 private:
  const ChunkTask& task(std::size_t i) const { return b_.tasks[g_.tasks[i]]; }
  const Plan& plan_;
  const TaskBatch& b_;
  const ObjectTasks& g_;
  const ChunkSpec& spec_;
  const NDView& out_;
  std::vector<std::unique_ptr<TaskCopier>> copiers_;
};

// ---- writing ----------------------------------------------------------------------------------------

// Builds each unit's new contents: what it held inside the domain (or the fill value), then the
// data written.
class WriteBuilder final : public UnitBuilder {
 public:
  WriteBuilder(const ChunkSpec& spec, const Plan& plan, const TaskBatch& b, const ObjectTasks& g, const NDView& data)
      : spec_(spec), plan_(plan), b_(b), g_(g), data_(data) {}

  // Elements outside the domain are kept as they are, never reset: another process may be growing
  // the array into them right now (its data is written before its metadata), and this write's
  // snapshot of the domain may be older than theirs. Growth itself clears what enters the domain.
  void build(std::size_t i, std::span<std::uint8_t> buf, bool) override {
    const ChunkTask& t = b_.tasks[g_.tasks[i]];
    copy_task(plan_, t, reinterpret_cast<std::byte*>(buf.data()), spec_, data_, true);
  }
  // For the same reason every stored inner chunk is kept, inside the domain or not.
  bool keep_untouched(std::size_t) override { return true; }

 private:
  const ChunkSpec& spec_;
  const Plan& plan_;
  const TaskBatch& b_;
  const ObjectTasks& g_;
  const NDView& data_;
};

}  // namespace

namespace {

// A stored object whose whole value a started read brings: the decoder reads it from memory.
class FetchedChunk final : public ChunkSource {
 public:
  FetchedChunk(Store& store, std::string key, std::optional<VersionedBytes> value)
      : store_(store), key_(std::move(key)), value_(std::move(value)) {}
  std::optional<VersionedBytes> read(const ByteRange& range) override {
    if (!value_) return std::nullopt;
    if (range.kind == ByteRange::Kind::All) return value_;
    auto part = BytesChunk(std::span<const std::uint8_t>(value_->bytes)).read(range);
    if (part) part->version = value_->version;
    return part;
  }
  std::optional<std::uint64_t> size() override {
    return value_ ? std::optional<std::uint64_t>(value_->bytes.size()) : std::nullopt;
  }
  std::string describe() const override { return "chunk '" + key_ + "'"; }
  std::string explain_unreadable() const override { return store_.explain_unreadable(key_); }

 private:
  Store& store_;
  std::string key_;
  std::optional<VersionedBytes> value_;
};

// The whole-object reads of a plan, started ahead of the threads that decode them: up to `window`
// at once (bounding the bodies held), started in the order the threads take the objects. After a
// failure no new read starts.
class Prefetch {
 public:
  Prefetch(Store& store, std::vector<std::string> keys, std::vector<std::uint64_t> max_bytes, std::size_t window)
      : store_(store),
        keys_(std::move(keys)),
        max_bytes_(std::move(max_bytes)),
        window_(window),
        pending_(keys_.size()) {
    std::lock_guard lk(mu_);
    top_up();
  }

  // The value of object `i`, waiting for it; starts the next read.
  std::optional<VersionedBytes> take(std::size_t i) {
    std::unique_ptr<PendingGet> p;
    {
      std::lock_guard lk(mu_);
      if (!pending_[i]) pending_[i] = store_.start_get(keys_[i], max_bytes_[i]);  // taken out of order
      p = std::move(pending_[i]);
    }
    try {
      auto v = p->wait();
      std::lock_guard lk(mu_);
      ++taken_;
      top_up();
      return v;
    } catch (...) {
      std::lock_guard lk(mu_);
      failed_ = true;
      throw;
    }
  }

 private:
  void top_up() {
    while (!failed_ && next_ < keys_.size() && next_ - taken_ < window_) {
      if (!pending_[next_]) pending_[next_] = store_.start_get(keys_[next_], max_bytes_[next_]);
      ++next_;
    }
  }

  Store& store_;
  std::vector<std::string> keys_;
  std::vector<std::uint64_t> max_bytes_;
  std::size_t window_;
  std::mutex mu_;
  std::vector<std::unique_ptr<PendingGet>> pending_;
  std::size_t next_ = 0, taken_ = 0;
  bool failed_ = false;
};

// Encoded bytes a read keeps on the wire or waiting for a thread at most (bodies in flight).
constexpr std::uint64_t kFetchWindowBytes = std::uint64_t{256} << 20;

}  // namespace

void Engine::read(const Plan& plan, const NDView& out) const {
  TaskBatches batches(plan, s.storage_indexer());
  TaskBatch batch;
  // With one stored object (a big shard), its inner chunks share the threads instead.
  const std::size_t inner_concurrency = batches.objects() == 1 ? concurrency : 1;
  while (batches.next(batch)) read_batch(plan, batch, inner_concurrency, out);
}

void Engine::read_batch(const Plan& plan, const TaskBatch& batch, std::size_t inner_concurrency,
                        const NDView& out) const {
  const auto& groups = batch.objects;
  // A store that keeps many reads on the wire without a thread each (a remote one) gets the
  // whole-object reads started ahead of the decoding threads, within a window of requests and
  // bytes: every chunk, and every shard the read needs most of (one request instead of its index
  // and then its data; the index and data are then one version of the shard by construction).
  std::optional<Prefetch> fetch;
  std::vector<std::size_t> slot(groups.size(), SIZE_MAX);  // each object's place in the prefetch
  if (const std::size_t in_flight = store.capabilities().reads_in_flight; in_flight > 1 && groups.size() > 1) {
    std::vector<std::string> keys;
    std::vector<std::uint64_t> max_bytes;
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const auto& g = groups[gi];
      if (s.layout && 2 * g.tasks.size() < units_in_domain(s, g.storage)) continue;
      slot[gi] = keys.size();
      keys.push_back(prefix + s.meta.chunk_key_encoding.encode(g.storage));
      max_bytes.push_back(s.object(g.storage).max_stored);
    }
    std::uint64_t per_object = std::max<std::uint64_t>(s.meta.data_type.size(), 1);
    for (const auto n : s.pipeline.spec().shape)
      if (__builtin_mul_overflow(per_object, static_cast<std::uint64_t>(n), &per_object)) per_object = UINT64_MAX;
    const std::size_t window = static_cast<std::size_t>(
        std::clamp<std::uint64_t>(kFetchWindowBytes / per_object, 2, static_cast<std::uint64_t>(in_flight)));
    if (!keys.empty()) fetch.emplace(store, std::move(keys), std::move(max_bytes), window);
  }
  ThreadPool::global().parallel_for(groups.size(), concurrency, [&](std::size_t gi) {
    const auto& g = groups[gi];
    const ObjectCodec oc = s.object(g.storage);
    const auto first = s.first_unit(g.storage);
    const std::string key = prefix + s.meta.chunk_key_encoding.encode(g.storage);
    std::optional<StoredChunk> stored;
    std::optional<FetchedChunk> fetched;
    std::optional<IndexCachedChunk> indexed;
    if (slot[gi] != SIZE_MAX)
      fetched.emplace(store, key, fetch->take(slot[gi]));
    else if (s.layout && index_cache)
      indexed.emplace(store, key, oc.max_stored, *index_cache);
    else
      stored.emplace(store, key, oc.max_stored);
    ChunkSource& src = fetched   ? static_cast<ChunkSource&>(*fetched)
                       : indexed ? static_cast<ChunkSource&>(*indexed)
                                 : static_cast<ChunkSource&>(*stored);
    std::vector<UnitRead> reqs(g.tasks.size());
    for (std::size_t k = 0; k < g.tasks.size(); ++k) {
      const ChunkTask& t = batch.tasks[g.tasks[k]];
      UnitRead& r = reqs[k];
      r.unit = s.layout ? unit_index(t.chunk, first, oc.units_per_shard) : 0;
      r.direct = reinterpret_cast<std::uint8_t*>(contiguous_target(plan, t, s.unit_grid, out));
      // The sink can take dimension-0 slabs in pieces when the task steps through them forward.
      if (!plan.points && !t.dims.empty()) {
        const DimChunkMap& m0 = *t.dims[0];
        if (!m0.is_list && m0.chunk_step == 1 && (m0.out_step == 1 || m0.count <= 1)) {
          r.slabs = true;
          r.first_slab = m0.chunk_start;
          r.end_slab = m0.chunk_start + m0.count;
        }
      }
    }
    ReadSink sink(plan, batch, g, *oc.unit_spec, out);
    partial_decoder(*oc.pipeline, src, inner_concurrency)->read(reqs, sink);
    if (progress)
      (*progress)(ProgressStep{.objects = 1, .bytes = group_bytes(plan, batch, g, s.meta.data_type.size())});
  });
}

namespace {

// One stored object a write changes.
struct WriteJob {
  std::shared_ptr<const void> codec;  // keeps the object's codec (rectilinear grids) alive
  std::unique_ptr<StoredChunk> target;
  std::vector<UnitWrite> writes;
  std::unique_ptr<WriteBuilder> builder;
  std::unique_ptr<PartialEncoder> enc;
  bool reads = false;                // builds on the old object (read-modify-write)
  std::optional<PendingWrite> held;  // prepared, not yet written
};

std::uint64_t held_bytes(const PendingWrite& w) {
  return w.bytes.size() + (w.fill_encoded ? w.fill_encoded->size() : 0);
}

// Writes a prepared object; when a concurrent writer changed what it was built from, builds it
// again from the new contents, as the swap retry policy allows. A conditional write that lost may
// still have landed before the other writer's change (its answer lost, the store cannot tell):
// when the object then fails, `maybe` counts it.
void commit_with_retry(WriteJob& j, PendingWrite&& first, ShardIndexCache* index_cache,
                       std::atomic<std::size_t>& maybe) {
  detail::Retry retry(detail::kSwapRetry);
  PendingWrite w = std::move(first);
  // The shard's kept index (if any) is of the old contents from now on.
  struct Forget {
    ShardIndexCache* cache;
    const std::string& key;
    ~Forget() {
      if (cache) cache->forget(key);
    }
  } forget{index_cache, j.target->key()};
  bool lost = false;
  try {
    while (!commit(*j.target, std::move(w))) {
      lost = true;
      if (!retry.next())
        throw ConflictError(j.target->describe() +
                            " kept changing under this write: " + std::to_string(retry.attempts()) + " attempts in " +
                            std::to_string(detail::kSwapRetry.deadline.count() / 1000) +
                            " s all lost to other writers");
      w = j.enc->prepare(j.writes, *j.builder);
    }
  } catch (const Error& e) {
    if (lost || dynamic_cast<const UncertainWriteError*>(&e)) ++maybe;
    throw;
  }
}

}  // namespace

// A write in two phases, so that a corrupt or unreadable chunk fails it before anything changed:
// first every object that builds on its old contents is read, decoded and re-encoded (held in
// memory, up to kWriteWorkingSet bytes), then everything is written. Beyond the working set, and
// beyond one batch of tasks (TaskBatches), the held objects are written in turns, and an error
// says how many objects were written.
void Engine::write(const Plan& plan, const NDView& data) const {
  TaskBatches batches(plan, s.storage_indexer());
  TaskBatch batch;
  const std::size_t inner_concurrency = batches.objects() == 1 ? concurrency : 1;
  Tally tally;
  try {
    while (batches.next(batch)) write_batch(plan, batch, inner_concurrency, data, tally);
  } catch (const Error& e) {
    const std::size_t written = tally.written.load(), maybe = tally.maybe.load();
    if ((written == 0 && maybe == 0) || !count_written) throw;
    const std::string objects = s.layout ? " shards" : " chunks";
    throw_like(e, std::string(e.what()) + " (after " + std::to_string(written) + " of " +
                      std::to_string(batches.objects()) + objects + " of this write were written" +
                      (maybe ? "; " + std::to_string(maybe) +
                                   " more may hold it: an answer lost on the way (then a race lost to another "
                                   "writer) leaves unknown whether they landed"
                             : std::string()) +
                      "; the others are unchanged)");
  }
}

void Engine::write_batch(const Plan& plan, const TaskBatch& batch, std::size_t inner_concurrency, const NDView& data,
                         Tally& tally) const {
  const auto& groups = batch.objects;
  std::vector<WriteJob> jobs(groups.size());
  std::vector<std::size_t> reading, covered;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& g = groups[gi];
    WriteJob& j = jobs[gi];
    const ObjectCodec oc = s.object(g.storage);
    j.codec = oc.keep;
    const auto first = s.first_unit(g.storage);
    j.target =
        std::make_unique<StoredChunk>(store, prefix + s.meta.chunk_key_encoding.encode(g.storage), oc.max_stored);
    j.writes.resize(g.tasks.size());
    for (std::size_t k = 0; k < g.tasks.size(); ++k) {
      const ChunkTask& t = batch.tasks[g.tasks[k]];
      UnitWrite& w = j.writes[k];
      w.unit = s.layout ? unit_index(t.chunk, first, oc.units_per_shard) : 0;
      // Only a write of every element of the unit, in the domain or not, may skip reading it:
      // elements outside this snapshot's domain may belong to a concurrent growth.
      w.covered =
          t.covers_domain && s.unit_grid.chunk_is_full(t.chunk) && !(keep && unit_intersects_domain(*keep, t.chunk));
      if (w.covered) w.direct = reinterpret_cast<const std::uint8_t*>(contiguous_target(plan, t, s.unit_grid, data));
    }
    j.builder = std::make_unique<WriteBuilder>(*oc.unit_spec, plan, batch, g, data);
    // Where other readers read a missing chunk as something else than the fill value, every
    // chunk is stored.
    const bool store_all = write_empty || s.meta.must_store_empty_chunks();
    j.enc = partial_encoder(*oc.pipeline, *j.target,
                            EncodeOptions{.write_empty = store_all, .concurrency = inner_concurrency});
    j.reads = j.enc->needs_old(j.writes, *j.builder);
    (j.reads ? reading : covered).push_back(gi);
  }

  auto report = [&](std::size_t gi) {
    if (progress)
      (*progress)(ProgressStep{.objects = 1, .bytes = group_bytes(plan, batch, groups[gi], s.meta.data_type.size())});
  };
  std::uint64_t object_bytes = s.meta.data_type.size();
  for (const auto n : s.pipeline.spec().shape)
    if (__builtin_mul_overflow(object_bytes, static_cast<std::uint64_t>(n), &object_bytes)) object_bytes = UINT64_MAX;
  object_bytes = std::max<std::uint64_t>(object_bytes, 1);
  // Commits wait on the store. One that keeps many requests in flight (a remote one) gets as many
  // commits at once as its limit, the working set and kMaxWaitingCommits allow, on threads that
  // wait for them; the others, the pool's threads.
  const std::size_t in_flight = store.capabilities().reads_in_flight;
  const std::uint64_t most =
      std::max<std::uint64_t>(concurrency, std::min<std::uint64_t>(in_flight, kMaxWaitingCommits));
  const auto waiting = static_cast<std::size_t>(std::clamp<std::uint64_t>(kWriteWorkingSet / object_bytes, 1, most));
  auto for_each_commit = [&](std::size_t n, const std::function<void(std::size_t)>& fn) {
    if (in_flight > 1 && waiting > concurrency)
      detail::run_waiting(n, waiting, fn);
    else
      ThreadPool::global().parallel_for(n, concurrency, fn);
  };
  auto commit_held = [&](std::vector<std::size_t>& held) {
    for_each_commit(held.size(), [&](std::size_t i) {
      WriteJob& j = jobs[held[i]];
      commit_with_retry(j, std::move(*j.held), index_cache.get(), tally.maybe);
      j.held.reset();
      ++tally.written;
      report(held[i]);
    });
    held.clear();
  };
  // Phase 1: prepare the objects that read their old contents, in waves.
  // A wave holds its objects' old and new bytes while it prepares: no more of them at once than
  // the working set allows (but always one per thread).
  const std::size_t wave = std::max<std::size_t>(
      concurrency,
      std::min<std::uint64_t>(std::max<std::size_t>(16, 4 * concurrency), kWriteWorkingSet / object_bytes));
  std::vector<std::size_t> held;
  std::uint64_t held_total = 0;
  for (std::size_t first = 0; first < reading.size(); first += wave) {
    const std::size_t n = std::min(wave, reading.size() - first);
    if (held_total > kWriteWorkingSet) {  // the working set is full: write what is held
      commit_held(held);
      held_total = 0;
    }
    ThreadPool::global().parallel_for(n, concurrency, [&](std::size_t i) {
      WriteJob& j = jobs[reading[first + i]];
      j.held = j.enc->prepare(j.writes, *j.builder);
    });
    for (std::size_t i = 0; i < n; ++i) {
      held.push_back(reading[first + i]);
      held_total += held_bytes(*jobs[reading[first + i]].held);
    }
  }
  // Phase 2: write them, then the objects the data covers completely (nothing to read).
  commit_held(held);
  for_each_commit(covered.size(), [&](std::size_t i) {
    WriteJob& j = jobs[covered[i]];
    commit_with_retry(j, j.enc->prepare(j.writes, *j.builder), index_cache.get(), tally.maybe);
    ++tally.written;
    report(covered[i]);
  });
}

}  // namespace zarrpp
