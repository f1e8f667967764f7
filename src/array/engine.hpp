#pragma once
// One version of an array's metadata with everything derived from it, and the engine that runs
// read and write plans against the store through the codec layer's partial decoders/encoders.
#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "../codec/chunk_codec.hpp"
#include "../select/plan.hpp"
#include "../select/task_batches.hpp"
#include "zarrpp/array/array.hpp"
#include "zarrpp/grid/chunk_grid.hpp"
#include "zarrpp/metadata/metadata.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp {

// Immutable: readers keep the one they started with while growth publishes the next.
// What one stored object is decoded and encoded with. Every object of a regular grid shares the
// snapshot's; on a rectilinear grid each object shape has its own (made when first asked for).
struct ObjectCodec {
  const CodecPipeline* pipeline = nullptr;
  const ChunkSpec* unit_spec = nullptr;  // a decoded unit of this object
  Shape units_per_shard;                 // all 1 when not sharded
  std::uint64_t max_stored = kNoLimit;
  std::shared_ptr<const void> keep;  // what the pointers point into, when it is not the snapshot
};

struct Snapshot {
  ArrayMetadata meta;
  Bytes meta_bytes;                     // exactly what is stored, for compare-and-swap
  ChunkGrid grid;                       // stored objects (shards when sharded)
  ChunkGrid unit_grid;                  // read/write units (inner chunks when sharded)
  CodecPipeline pipeline;               // for a stored object
  std::optional<UnitLayout> layout;     // inner chunks per shard, when sharded
  ChunkSpec unit_spec;                  // a decoded read/write unit
  Shape units_per_shard;                // units per stored object (all 1 when not sharded)
  std::uint64_t max_stored = kNoLimit;  // the most bytes a stored object can hold
  std::uint64_t generation = 0;         // node::next_generation() when made
  // The codec of the stored object at storage grid index `storage`.
  ObjectCodec object(std::span<const std::int64_t> storage) const;
  // The unit (chunk, or inner chunk of a shard) index range of the stored object `storage`:
  // its first unit per dimension.
  std::vector<std::int64_t> first_unit(std::span<const std::int64_t> storage) const;
  // The stored object that holds unit `unit`; along dimension `d` only.
  std::vector<std::int64_t> storage_of(std::span<const std::int64_t> unit) const;
  std::int64_t storage_index(std::size_t d, std::int64_t unit) const;
  // storage_index for TaskBatches: empty when every unit is a stored object (not sharded).
  StorageIndex storage_indexer() const;

  struct ObjectCache;
  std::shared_ptr<ObjectCache> objects;  // rectilinear grids only
};

// Validates metadata into a snapshot (every codec built). `stored` is the document's bytes as
// they are in the store, when the snapshot was read from it.
// `heap`: for a variable-length array, the strings of the read or write the snapshot serves.
std::shared_ptr<const Snapshot> make_snapshot(ArrayMetadata meta, std::optional<Bytes> stored,
                                              const std::shared_ptr<VlenHeap>& heap = nullptr);
// The same snapshot bound to a fresh heap (seeded with the fill value), for one vlen operation.
std::shared_ptr<const Snapshot> with_heap(const Snapshot& s, const std::shared_ptr<VlenHeap>& heap);
// Reads and validates the array at `path`.
std::shared_ptr<const Snapshot> load_snapshot(Store& store, const std::string& path);

class ShardIndexCache;

struct Engine {
  Store& store;
  const Snapshot& s;
  std::string prefix;
  std::size_t concurrency;
  bool write_empty;
  // While a domain change is under way: the current (old) domain's unit grid, whose elements
  // every chunk write must preserve until the new metadata is in place.
  const ChunkGrid* keep = nullptr;
  // Whether a failed write says how many of its objects were written (not in growth, where the
  // caller reports the whole operation as not applied).
  bool count_written = true;
  // Told about each stored object finished (Array::set_progress), when set.
  std::shared_ptr<const ProgressCallback> progress = nullptr;
  // Shard indexes kept for the handle's life (a remote store's sharded arrays), when set.
  std::shared_ptr<ShardIndexCache> index_cache = nullptr;

  void read(const Plan& plan, const NDView& out) const;
  void write(const Plan& plan, const NDView& data) const;

 private:
  void read_batch(const Plan& plan, const TaskBatch& batch, std::size_t inner_concurrency, const NDView& out) const;
  // What a write has done so far: objects written, and objects whose write lost a race to another
  // writer and then failed (a lost answer may have let it land before the other writer's change).
  struct Tally {
    std::atomic<std::size_t> written{0}, maybe{0};
  };
  void write_batch(const Plan& plan, const TaskBatch& batch, std::size_t inner_concurrency, const NDView& data,
                   Tally& tally) const;
};

// The store prefix (relative to the array) under which every chunk key of `meta` lies: "c/" for
// the default encoding, "c" itself for a 0-d array.
inline std::string chunk_listing_prefix(const ArrayMetadata& meta) {
  return meta.rank() == 0 ? meta.chunk_key_encoding.encode({}) : meta.chunk_key_encoding.prefix();
}

}  // namespace zarrpp
