// Batches of a plan's tasks, object by object (see task_batches.hpp). An orthogonal plan's maps
// are sorted along each dimension (by chunk, in the selection's direction), so the units of one
// stored object form one run of maps per dimension, and an object's tasks are the product of its
// runs: objects are walked in C order of their runs, and tasks are made only for the batch.
#include "task_batches.hpp"

#include <map>

#include "zarrpp/core/checked.hpp"

namespace zarrpp {

TaskBatches::TaskBatches(const Plan& plan, const StorageIndex& storage_index, std::size_t tasks_per_batch)
    : plan_(plan), per_batch_(std::max<std::size_t>(tasks_per_batch, 1)) {
  if (plan.points)
    group_points(storage_index);
  else
    runs_by_object(storage_index);
}

void TaskBatches::group_points(const StorageIndex& storage_index) {
  if (!storage_index) {
    for (std::size_t i = 0; i < plan_.tasks.size(); ++i) point_objects_.push_back({plan_.tasks[i].chunk, {i}});
  } else {
    std::map<std::vector<std::int64_t>, std::size_t> index;
    for (std::size_t i = 0; i < plan_.tasks.size(); ++i) {
      const auto& unit = plan_.tasks[i].chunk;
      std::vector<std::int64_t> storage(unit.size());
      for (std::size_t d = 0; d < unit.size(); ++d) storage[d] = storage_index(d, unit[d]);
      auto [it, added] = index.try_emplace(storage, point_objects_.size());
      if (added) point_objects_.push_back({std::move(storage), {}});
      point_objects_[it->second].tasks.push_back(i);
    }
  }
  objects_ = point_objects_.size();
  done_ = point_objects_.empty();
}

void TaskBatches::runs_by_object(const StorageIndex& storage_index) {
  const std::size_t rank = plan_.dim_maps.size();
  runs_.resize(rank);
  run_storage_.resize(rank);
  std::uint64_t objects = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    const auto& maps = plan_.dim_maps[d];
    for (std::size_t i = 0; i < maps.size(); ++i) {
      const std::int64_t storage = storage_index ? storage_index(d, maps[i].chunk) : maps[i].chunk;
      if (!runs_[d].empty() && run_storage_[d].back() == storage) {
        runs_[d].back().second = i + 1;
        continue;
      }
      runs_[d].emplace_back(i, i + 1);
      run_storage_[d].push_back(storage);
    }
    objects = checked::mul(objects, static_cast<std::uint64_t>(runs_[d].size()), "stored objects touched");
  }
  objects_ = objects;
  done_ = objects == 0;
  at_.assign(rank, 0);
}

// The tasks of the object at `at_`: the product of its runs, in C order.
void TaskBatches::add_object(TaskBatch& batch) const {
  const std::size_t rank = runs_.size();
  ObjectTasks object;
  object.storage.resize(rank);
  std::vector<std::size_t> map(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    object.storage[d] = run_storage_[d][at_[d]];
    map[d] = runs_[d][at_[d]].first;
  }
  for (;;) {
    ChunkTask t;
    t.covers_domain = true;
    t.chunk.resize(rank);
    t.dims.resize(rank);
    for (std::size_t d = 0; d < rank; ++d) {
      const DimChunkMap& m = plan_.dim_maps[d][map[d]];
      t.chunk[d] = m.chunk;
      t.dims[d] = &m;
      t.covers_domain = t.covers_domain && m.covers_domain;
    }
    object.tasks.push_back(batch.made.size());
    batch.made.push_back(std::move(t));
    bool more = false;  // the next map of the object, in C order
    for (std::size_t d = rank; d > 0 && !more; --d) {
      more = ++map[d - 1] < runs_[d - 1][at_[d - 1]].second;
      if (!more) map[d - 1] = runs_[d - 1][at_[d - 1]].first;
    }
    if (!more) break;
  }
  batch.objects.push_back(std::move(object));
}

// Steps `at_` to the next object; false after the last.
bool TaskBatches::advance() {
  for (std::size_t d = runs_.size(); d > 0; --d) {
    if (++at_[d - 1] < runs_[d - 1].size()) return true;
    at_[d - 1] = 0;
  }
  return false;
}

bool TaskBatches::next(TaskBatch& batch) {
  batch.made.clear();
  batch.objects.clear();
  batch.tasks = {};
  if (done_) return false;
  if (plan_.points) {
    batch.tasks = plan_.tasks;
    batch.objects = std::move(point_objects_);
    done_ = true;
    return true;
  }
  do {
    add_object(batch);
    if (!advance()) done_ = true;
  } while (!done_ && batch.made.size() < per_batch_);
  batch.tasks = batch.made;
  return true;
}

}  // namespace zarrpp
