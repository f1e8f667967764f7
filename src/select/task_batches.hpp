#pragma once
// A plan's tasks grouped by the stored object (a shard, or a chunk when not sharded) that holds
// their units, made in batches of whole objects as the engine runs them. An orthogonal plan's
// tasks are never all held at once: a selection touching a million one-element chunks costs one
// batch of memory, not a million tasks.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "plan.hpp"

namespace zarrpp {

// The tasks of one stored object.
struct ObjectTasks {
  std::vector<std::int64_t> storage;  // storage grid index
  std::vector<std::size_t> tasks;     // indices into the batch's tasks
};

struct TaskBatch {
  std::span<const ChunkTask> tasks;  // the plan's own (points) or `made`
  std::vector<ChunkTask> made;
  std::vector<ObjectTasks> objects;
};

// The stored object (its index along dimension d) that holds unit `unit` along d: a shard's index
// when sharded. Empty: every unit is a stored object of its own.
using StorageIndex = std::function<std::int64_t(std::size_t d, std::int64_t unit)>;

class TaskBatches {
 public:
  // A batch is whole stored objects, as many as fit in this many tasks (at least one object).
  static constexpr std::size_t kTasksPerBatch = 16384;

  TaskBatches(const Plan& plan, const StorageIndex& storage_index, std::size_t tasks_per_batch = kTasksPerBatch);
  // The next batch; false when every task was given.
  bool next(TaskBatch& batch);
  // How many stored objects the plan touches, in all batches.
  std::uint64_t objects() const { return objects_; }

 private:
  using Run = std::pair<std::size_t, std::size_t>;  // [begin, end) of one dimension's maps
  void runs_by_object(const StorageIndex& storage_index);
  void add_object(TaskBatch& batch) const;
  bool advance();
  void group_points(const StorageIndex& storage_index);

  const Plan& plan_;
  std::size_t per_batch_;
  std::uint64_t objects_ = 0;
  // Orthogonal plans: each dimension's maps in runs of one stored object each; the object next.
  std::vector<std::vector<Run>> runs_;
  std::vector<std::vector<std::int64_t>> run_storage_;  // the storage index of each run
  std::vector<std::size_t> at_;
  bool done_ = false;
  // Point plans: every task at once (they cost as much as the points themselves).
  std::vector<ObjectTasks> point_objects_;
};

}  // namespace zarrpp
