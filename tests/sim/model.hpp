#pragma once
// The model a simulated run is checked against, fed by the object server with every change as it
// takes effect (ground truth) and by the actors with every operation they start and finish:
//  - metadata: each change of an array's zarr.json is the change of the one operation that made
//    it (a growth's exact domain change, an attribute update's exact keys), applied to the
//    document before it — so the stored history is a serial order of operations; an operation
//    that succeeded made its change exactly once; one that failed made none, unless its error
//    says it may still take effect (or that the new domain is in effect);
//  - chunks: each change of a chunk (shard) object sets exactly the elements of one write to that
//    write's value (every written value is its operation's id) and keeps every other element — no
//    lost update, no torn or merged chunk; a failed write changed no more objects than its error
//    says; nothing changes on behalf of an operation after it returned, unless it said it may;
//  - readers: the domain a reader saw was stored at some moment during its read, and each chunk
//    it read is one version of that chunk stored during its read.
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "object_server.hpp"

namespace zarrpp::sim {

// An array of the run: 2-d int32, fill value 0, chunk grid regular_bounded with origin 0.
struct ArrayGeometry {
  std::string path;
  std::int64_t chunk[2] = {4, 4};
  std::int64_t shard[2] = {0, 0};  // 0: not sharded
  std::int64_t width = 8;          // the fixed extent of dimension 1
  std::int64_t object_rows() const { return shard[0] ? shard[0] : chunk[0]; }
  std::int64_t object_cols() const { return shard[0] ? shard[1] : chunk[1]; }
};

enum class OpKind { setup, write, grow, attrs, read, consolidate };

struct OpRecord {
  OpKind kind = OpKind::setup;
  int array = -1;
  std::unordered_set<std::uint64_t> cover;          // write: the elements (packed coordinates)
  std::int64_t lower_change = 0, upper_change = 0;  // grow: the domain's change along dimension 0
  bool grow_has_data = false;
  std::string attr_key;              // attrs: the key set to the op's id
  std::uint64_t start = 0, end = 0;  // the store's change numbers before it began and after it ended
  bool done = false, ok = false, uncertain = false, in_effect = false;
  std::string error;
  int transitions = 0;            // metadata changes made on its behalf
  std::set<std::string> objects;  // chunk objects it changed
};

std::uint64_t pack(std::int64_t row, std::int64_t col);

class Model {
 public:
  explicit Model(std::vector<ArrayGeometry> arrays) : arrays_(std::move(arrays)), meta_(arrays_.size()) {}

  // Called by the server under its lock, in order.
  void on_change(const Change& c);

  // Operations: registered before they start (their id is every value they write), ended after.
  std::uint64_t begin(OpRecord op, std::uint64_t store_seq);
  void end(std::uint64_t id, std::uint64_t store_seq, bool ok, const std::string& error, bool uncertain);
  // A read of `array` that saw domain rows [lower, upper) and, of rows [from, to) in it, `values`
  // (rows x width, C order).
  void check_read(std::uint64_t id, int array, std::int64_t lower, std::int64_t upper, std::int64_t from,
                  std::int64_t to, const std::vector<std::int32_t>& values);

  std::vector<std::string> violations() const;
  std::uint64_t violation_count() const;
  std::uint64_t changes() const;
  std::uint64_t unverifiable_reads() const;

 private:
  struct MetaVersion {
    std::uint64_t seq;
    std::int64_t lower, upper;
  };
  struct ObjectVersion {
    std::uint64_t seq;
    std::vector<std::int32_t> values;  // the object's region, rows x cols, C order
    std::uint64_t writer = 0;          // the op whose values the change set (0: cleared, or none)
  };
  struct ObjectRef {
    int array;
    std::int64_t row, col;  // first element of its region
  };
  std::optional<ObjectRef> object_of(const std::string& key) const;
  int array_of_metadata(const std::string& key) const;
  std::vector<std::int32_t> decode(const ArrayGeometry& g, const std::optional<Bytes>& b, std::string& err) const;
  void check_change(const Change& c);
  void on_metadata(int array, const Change& c);
  void on_group(const Change& c);
  void on_object(const ObjectRef& ref, const Change& c);
  bool in_domain(int array, std::int64_t row, std::size_t back) const;
  std::int32_t stored_value(int array, std::int64_t row, std::int64_t col) const;
  void check_entering_rows(int array, const OpRecord& grow, std::uint64_t id, std::int64_t from, std::int64_t to);
  void violate(std::string what);
  std::string describe_op(std::uint64_t id);
  OpRecord* op(std::uint64_t id);

  std::vector<ArrayGeometry> arrays_;
  mutable std::mutex mu_;
  std::unordered_map<std::uint64_t, OpRecord> ops_;
  std::uint64_t next_id_ = 1;
  std::vector<std::deque<MetaVersion>> meta_;                 // per array, the latest versions
  std::map<std::string, std::deque<ObjectVersion>> objects_;  // per chunk object, the latest versions
  std::unordered_set<std::size_t> seen_docs_;                 // hashes of every array document stored
  std::vector<std::string> violations_;
  std::uint64_t violation_count_ = 0, changes_ = 0, unverifiable_ = 0;
};

}  // namespace zarrpp::sim
