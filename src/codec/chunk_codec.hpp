#pragma once
// The codec layer's interface to the array layer: reading and writing parts of one stored object
// (a chunk, or a shard of inner chunks) through partial decoders and encoders. The array layer
// says which units (inner chunks; the chunk itself when not sharded) it needs and what to do with
// their decoded elements; the codec layer fetches, verifies, decodes and encodes every byte.
//
//   auto dec = partial_decoder(pipeline, source);       // source: a store key, or bytes in memory
//   dec->read(requests, sink);                          // sink.decoded(...) / sink.missing(...)
//   auto enc = partial_encoder(pipeline, source, options);
//   PendingWrite w = enc->prepare(writes, builder);     // reads and decodes what it must, encodes
//   commit(target, std::move(w));                       // writes or erases the stored object
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zarrpp/codec/codec.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp {

// Where a stored object's bytes come from.
class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // The bytes of `range` with the object's version; nullopt when the object does not exist.
  virtual std::optional<VersionedBytes> read(const ByteRange& range) = 0;
  virtual std::optional<std::uint64_t> size() = 0;
  // Pieces of `range` in order (see Store::get_streamed); false when the object does not exist.
  virtual bool read_streamed(const ByteRange& range, std::size_t piece, const Store::PieceSink& sink);
  // Whether read_streamed reads from the source piece by piece (so streaming pays off).
  virtual bool streams_natively() const { return false; }
  // A shard's index (ShardDecoder's first read): read like any range unless the source keeps
  // indexes (then `cached` says the answer came from there, and forget_index drops it once its
  // data turned out to be of another version).
  virtual std::optional<VersionedBytes> read_index(const ByteRange& range, bool& cached) {
    cached = false;
    return read(range);
  }
  virtual void forget_index() {}
  // How many reads of it the store keeps on the wire at once (StoreCapabilities::reads_in_flight):
  // more than 1 for a remote store, where a round trip is worth many bytes.
  virtual std::size_t reads_in_flight() const { return 0; }
  // How errors name it: "chunk 'c/0/1'".
  virtual std::string describe() const = 0;
  // After its bytes failed to decode: why they may not be what is stored ("" when no cause is
  // found; see Store::explain_unreadable).
  virtual std::string explain_unreadable() const { return ""; }
};

// A stored object of a store: the source of reads, and the target of writes.
class StoredChunk final : public ChunkSource {
 public:
  // `max_bytes`: more than that stored is refused before it is read (a hostile store).
  StoredChunk(Store& store, std::string key, std::uint64_t max_bytes = kNoLimit)
      : store_(store), key_(std::move(key)), max_bytes_(max_bytes) {}
  std::optional<VersionedBytes> read(const ByteRange& range) override {
    return store_.get_versioned(key_, range, max_bytes_);
  }
  std::optional<std::uint64_t> size() override { return store_.size(key_); }
  bool read_streamed(const ByteRange& range, std::size_t piece, const Store::PieceSink& sink) override {
    return store_.get_streamed(key_, range, piece, sink);
  }
  bool streams_natively() const override { return store_.capabilities().native_streaming; }
  std::size_t reads_in_flight() const override { return store_.capabilities().reads_in_flight; }
  std::string describe() const override { return "chunk '" + key_ + "'"; }
  std::string explain_unreadable() const override { return store_.explain_unreadable(key_); }
  Store& store() const { return store_; }
  const std::string& key() const { return key_; }

 private:
  Store& store_;
  std::string key_;
  std::uint64_t max_bytes_;
};

// A stored object held in memory (an inner shard of a nested shard, a whole encoded chunk).
class BytesChunk final : public ChunkSource {
 public:
  explicit BytesChunk(std::optional<std::span<const std::uint8_t>> bytes, std::string what = "chunk")
      : bytes_(bytes), what_(std::move(what)) {}
  std::optional<VersionedBytes> read(const ByteRange& range) override;
  std::optional<std::uint64_t> size() override;
  std::string describe() const override { return what_; }

 private:
  std::optional<std::span<const std::uint8_t>> bytes_;
  std::string what_;
};

// ---- reading ----------------------------------------------------------------------------------

// One unit a read needs: its C-order index among the object's units (0 when not sharded), the
// range of dimension-0 slabs [first_slab, end_slab) of it the read touches, whether the sink can
// take the unit's slabs in pieces, and where the whole decoded unit may be written directly
// (a contiguous C-order block of the caller's output), if anywhere.
struct UnitRead {
  std::size_t unit = 0;
  std::int64_t first_slab = 0, end_slab = 0;
  bool slabs = false;
  std::uint8_t* direct = nullptr;
};

// Receives decoded units. For request i: missing(i) when the unit is not stored (its elements are
// the fill value); otherwise, unless the unit was decoded straight into `direct`, decoded(i, a, b,
// p) one or more times with the unit's slabs [a, b) of dimension 0 in C order at p (the whole
// unit when the request cannot take slabs). Called from several threads at once for different i.
class UnitSink {
 public:
  virtual ~UnitSink() = default;
  virtual void missing(std::size_t i) = 0;
  virtual void decoded(std::size_t i, std::int64_t first_slab, std::int64_t end_slab, const std::uint8_t* data) = 0;
};

class PartialDecoder {
 public:
  virtual ~PartialDecoder() = default;
  // Decodes what `requests` need; CodecError names the stored object on corrupt data.
  virtual void read(std::span<const UnitRead> requests, UnitSink& sink) = 0;
};

// The decoder for an object of `pipeline` read from `source` (which must outlive it): shards
// fetch their index, then only the inner chunks asked for; uncompressed chunks stream from local
// files in slabs, checksums verified on the way; everything else decodes the whole chunk.
std::unique_ptr<PartialDecoder> partial_decoder(const CodecPipeline& pipeline, ChunkSource& source,
                                                std::size_t concurrency = 1);

// ---- writing ----------------------------------------------------------------------------------

// One unit a write changes: `covered` when its new contents need nothing of the old ones (the
// codec layer starts from the fill value), and `direct` when those contents already lie complete
// and C-ordered in the caller's memory (encoded from there, without a copy).
struct UnitWrite {
  std::size_t unit = 0;
  bool covered = false;
  const std::uint8_t* direct = nullptr;
};

class UnitBuilder {
 public:
  virtual ~UnitBuilder() = default;
  // Writes request i's new elements into `buf` (the unit's full decoded shape), which holds the
  // unit's old contents when `had_old`, else the fill value.
  virtual void build(std::size_t i, std::span<std::uint8_t> buf, bool had_old) = 0;
  // For a unit the write does not touch: whether it must be kept (false: it holds nothing the
  // array can show any more, and is dropped from the shard). Not asked when not sharded.
  virtual bool keep_untouched(std::size_t unit) = 0;
};

// The new state of a stored object, ready to be written. Holds the bytes, and the version of the
// old object that was read to build them (for a write conditioned on it).
struct PendingWrite {
  enum class Kind { none, set, erase };
  Kind kind = Kind::none;
  Bytes bytes;
  bool read_old = false;            // the old object was read
  std::optional<Version> based_on;  // its version when it existed
  // For an erase of an object that was read: the object encoded with only the fill value, for
  // stores that can write conditionally but not erase conditionally.
  std::optional<Bytes> fill_encoded;
};

struct EncodeOptions {
  bool write_empty = false;  // store units that hold only the fill value (else drop them)
  std::size_t concurrency = 1;
};

class PartialEncoder {
 public:
  virtual ~PartialEncoder() = default;
  // Reads and decodes what the write needs of the old object, builds and encodes the new one.
  // Writes nothing: the array's commit (src/array/commit.hpp) does.
  virtual PendingWrite prepare(std::span<const UnitWrite> writes, UnitBuilder& builder) = 0;
  // Whether prepare() will read the old object for these writes (asks builder.keep_untouched).
  virtual bool needs_old(std::span<const UnitWrite> writes, UnitBuilder& builder) = 0;
};

std::unique_ptr<PartialEncoder> partial_encoder(const CodecPipeline& pipeline, ChunkSource& source,
                                                const EncodeOptions& options);

// ---- what arrays need to know of a pipeline --------------------------------------------------

// When the pipeline is a single sharding_indexed codec: the inner chunk shape and the number of
// inner chunks per shard along each dimension. nullopt otherwise.
struct UnitLayout {
  Shape unit_shape;
  Shape units_per_shard;
};
std::optional<UnitLayout> unit_layout(const CodecPipeline& pipeline);

// Refuses (LimitError), when an array is created, a pipeline whose chunks (inner chunks when
// sharded) could never be written: decoded larger than zarrpp's 4 GiB per chunk, or larger than a
// codec can encode (Blosc's 2 GB).
void check_chunks_writable(const CodecPipeline& pipeline);

// An upper bound on the stored size of one object of the pipeline (a whole chunk or shard), for
// refusing hostile stores that claim more.
std::uint64_t max_stored_size(const CodecPipeline& pipeline);

}  // namespace zarrpp
