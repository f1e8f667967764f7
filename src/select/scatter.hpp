#pragma once
// Moving elements between decoded chunk buffers and the caller's views, as a plan's task says.
#include <cstddef>
#include <cstdint>
#include <span>

#include "plan.hpp"
#include "zarrpp/codec/codec.hpp"
#include "zarrpp/core/ndarray.hpp"

namespace zarrpp {

// Copies the elements a task selects between a chunk buffer (the unit's full shape, C order) and
// the caller's view: chunk -> view for reads, view -> chunk for writes. Set up once per task
// (strides, whether to stream), then used for the whole chunk or, reading, for pieces of it.
class TaskCopier {
 public:
  TaskCopier(const Plan& plan, const ChunkTask& task, const ChunkSpec& spec, const NDView& view, bool to_chunk);
  void copy(std::byte* chunk) const;
  // Reading in pieces: the task's elements in dimension-0 slabs [first, end) of the chunk, whose
  // bytes start at `data`. Not for point plans; one thread at a time.
  void copy_slabs(std::int64_t first, std::int64_t end, const std::byte* data);

 private:
  void run(const std::vector<const DimChunkMap*>& dims, std::byte* chunk) const;
  const Plan& plan_;
  const ChunkTask& task_;
  const ChunkSpec& spec_;
  const NDView& view_;
  bool to_chunk_;
  std::size_t es_;
  bool stream_ = false;
  std::vector<std::int64_t> chunk_strides_, view_strides_;
  std::vector<const DimChunkMap*> dims_;  // the task's, dimension 0 replaced while copying slabs
};

// A TaskCopier used once.
void copy_task(const Plan& plan, const ChunkTask& task, std::byte* chunk, const ChunkSpec& spec, const NDView& view,
               bool to_chunk);
// Writes the fill value at the view positions a task selects (a read of a missing chunk),
// straight from the one fill element: no chunk-sized buffer, however large the chunk.
void fill_task(const Plan& plan, const ChunkTask& task, const ChunkSpec& spec, const NDView& view);
// Where a task's chunk lies in the caller's view when it maps onto one contiguous C-order block
// of it (so the chunk can be decoded straight into, or encoded straight from, the caller's
// memory); nullptr otherwise.
std::byte* contiguous_target(const Plan& plan, const ChunkTask& task, const ChunkGrid& g, const NDView& view);

// Whether non-temporal (streaming) stores are used for large outputs: SSE2 on x86-64, unless the
// build forces the portable path (ZARRPP_PORTABLE), which copies with memcpy.
bool uses_streaming_stores();

}  // namespace zarrpp
