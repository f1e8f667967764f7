// Scatter and gather between decoded chunk buffers and the caller's views.
#include "scatter.hpp"

#include <cstring>

// Streaming stores where SSE2 is there (every x86-64), unless the portable path is forced.
#if defined(__SSE2__) && !defined(ZARRPP_PORTABLE)
#include <emmintrin.h>
#define ZARRPP_STREAMING_STORES 1
#else
#define ZARRPP_STREAMING_STORES 0
#endif

namespace zarrpp {

bool uses_streaming_stores() { return ZARRPP_STREAMING_STORES != 0; }

namespace {

inline void copy_elem(std::byte* dst, const std::byte* src, std::size_t es) {
  switch (es) {
    case 1:
      *dst = *src;
      break;
    case 2:
      std::memcpy(dst, src, 2);
      break;
    case 4:
      std::memcpy(dst, src, 4);
      break;
    case 8:
      std::memcpy(dst, src, 8);
      break;
    default:
      std::memcpy(dst, src, es);
  }
}

#if ZARRPP_STREAMING_STORES
// Copies fewer than 16 bytes with fixed-size moves. (A memcpy of a variable size the compiler
// knows to be small becomes `rep movsb` when inlined, whose start-up costs more than the
// 128-byte rows it brackets take to stream: 15% of a whole read.)
inline void copy_small(std::byte* dst, const std::byte* src, std::size_t n) {
  if (n & 8) {
    std::memcpy(dst, src, 8);
    dst += 8;
    src += 8;
  }
  if (n & 4) {
    std::memcpy(dst, src, 4);
    dst += 4;
    src += 4;
  }
  if (n & 2) {
    std::memcpy(dst, src, 2);
    dst += 2;
    src += 2;
  }
  if (n & 1) *dst = *src;
}

// Copies with non-temporal stores: a large output is written once and not read back soon, so
// its lines need not be read into the cache first (as ordinary stores do) nor evict what is
// hot. Callers issue store_fence() before the data is handed to another thread.
inline void copy_streaming(std::byte* dst, const std::byte* src, std::size_t len) {
  std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(dst) & 15)) & 15;
  if (head > len) head = len;
  copy_small(dst, src, head);
  dst += head;
  src += head;
  len -= head;
  auto* d = reinterpret_cast<__m128i*>(dst);
  const auto* q = reinterpret_cast<const __m128i*>(src);
  const std::size_t n = len / 16;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128i a = _mm_loadu_si128(q + i), b = _mm_loadu_si128(q + i + 1), c = _mm_loadu_si128(q + i + 2),
                  e = _mm_loadu_si128(q + i + 3);
    _mm_stream_si128(d + i, a);
    _mm_stream_si128(d + i + 1, b);
    _mm_stream_si128(d + i + 2, c);
    _mm_stream_si128(d + i + 3, e);
  }
  for (; i < n; ++i) _mm_stream_si128(d + i, _mm_loadu_si128(q + i));
  copy_small(dst + n * 16, src + n * 16, len - n * 16);
}
inline void store_fence() { _mm_sfence(); }
#else
// The portable path: ordinary copies, which need no fence.
inline void copy_streaming(std::byte* dst, const std::byte* src, std::size_t len) { std::memcpy(dst, src, len); }
inline void store_fence() {}
#endif

struct OrthoCopy {
  const std::vector<const DimChunkMap*>& dims;     // the task's, per array dimension
  const std::vector<std::int64_t>& chunk_strides;  // bytes, per array dim
  std::vector<std::int64_t> view_strides;          // bytes, per array dim (0 for dropped dims)
  std::size_t es;
  bool to_chunk;  // true: view -> chunk (write); false: chunk -> view (read)
  // From dimension flat_from on, the selected box is one contiguous run of flat_bytes in both the
  // chunk and the view: copied with one memcpy.
  std::size_t flat_from = SIZE_MAX;
  std::size_t flat_bytes = 0;
  bool stream = false;  // reads into a large output: non-temporal stores for runs of 64 bytes or more

  void out(std::byte* v, const std::byte* c, std::size_t len) const {
    if (stream && len >= 64)
      copy_streaming(v, c, len);
    else
      std::memcpy(v, c, len);
  }
  std::int64_t flat_chunk_off = 0, flat_view_off = 0;  // where the run starts, from dimension flat_from on

  void find_flat(const Shape& chunk_shape) {
    const std::size_t r = dims.size();
    const auto e = static_cast<std::int64_t>(es);
    if (r == 0 || !dims[r - 1]->unit() || chunk_strides[r - 1] != e || view_strides[r - 1] != e) return;
    std::size_t f = r - 1;
    std::int64_t run = dims[r - 1]->count;  // elements in the contiguous run from f on
    while (f > 0) {
      const auto& m = *dims[f];
      const auto& p = *dims[f - 1];
      // Dimension f spans its whole chunk extent, so stepping f-1 continues the run in both.
      if (!p.unit() || m.chunk_start != 0 || m.count != chunk_shape[f] || chunk_strides[f - 1] != run * e ||
          view_strides[f - 1] != run * e)
        break;
      --f;
      run *= p.count;
    }
    flat_from = f;
    flat_bytes = static_cast<std::size_t>(run) * es;
    for (std::size_t d = f; d < r; ++d) {
      flat_chunk_off += dims[d]->chunk_start * chunk_strides[d];
      flat_view_off += dims[d]->out_start * view_strides[d];
    }
  }

  void run(std::byte* chunk, std::byte* view, std::size_t d) const {
    if (d == flat_from) {
      if (to_chunk)
        std::memcpy(chunk + flat_chunk_off, view + flat_view_off, flat_bytes);
      else
        out(view + flat_view_off, chunk + flat_chunk_off, flat_bytes);
      return;
    }
    const auto& m = *dims[d];
    const std::int64_t n = m.count;
    const auto cs = chunk_strides[d], vs = view_strides[d];
    if (d + 2 == dims.size() && !m.is_list) {
      // Rows: the last dimension a contiguous run in both; step along this one with pointers.
      const auto& last = *dims[d + 1];
      const auto e = static_cast<std::int64_t>(es);
      if (last.unit() && chunk_strides[d + 1] == e && view_strides[d + 1] == e) {
        std::byte* c = chunk + m.chunk_start * cs + last.chunk_start * e;
        std::byte* v = view + m.out_start * vs + last.out_start * e;
        const std::int64_t cstep = m.chunk_step * cs, vstep = m.out_step * vs;
        const auto len = static_cast<std::size_t>(last.count) * es;
        if (to_chunk)
          for (std::int64_t i = 0; i < n; ++i, c += cstep, v += vstep) std::memcpy(c, v, len);
        else
          for (std::int64_t i = 0; i < n; ++i, c += cstep, v += vstep) out(v, c, len);
        return;
      }
    }
    if (d + 1 == dims.size()) {
      if (m.unit() && vs == static_cast<std::int64_t>(es) && cs == static_cast<std::int64_t>(es)) {
        std::byte* c = chunk + m.chunk_start * cs;
        std::byte* v = view + m.out_start * vs;
        if (to_chunk)
          std::memcpy(c, v, static_cast<std::size_t>(n) * es);
        else
          out(v, c, static_cast<std::size_t>(n) * es);
        return;
      }
      for (std::int64_t i = 0; i < n; ++i) {
        std::byte* c = chunk + m.cpos(i) * cs;
        std::byte* v = view + m.opos(i) * vs;
        if (to_chunk)
          copy_elem(c, v, es);
        else
          copy_elem(v, c, es);
      }
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) run(chunk + m.cpos(i) * cs, view + m.opos(i) * vs, d + 1);
  }
};

// Strides of the caller's view per array dimension (dropped dimensions contribute nothing).
std::vector<std::int64_t> view_strides_per_dim(const Plan& plan, const NDView& view) {
  std::vector<std::int64_t> s(plan.out_dim_of.size(), 0);
  for (std::size_t d = 0; d < s.size(); ++d)
    if (plan.out_dim_of[d] != SIZE_MAX) s[d] = view.strides()[plan.out_dim_of[d]];
  return s;
}

}  // namespace

TaskCopier::TaskCopier(const Plan& plan, const ChunkTask& task, const ChunkSpec& spec, const NDView& view,
                       bool to_chunk)
    : plan_(plan), task_(task), spec_(spec), view_(view), to_chunk_(to_chunk), es_(spec.dtype.size()) {
  if (plan.points || task.dims.empty()) return;
  chunk_strides_ = c_strides(spec.shape, es_);
  view_strides_ = view_strides_per_dim(plan, view);
  dims_ = task.dims;
  // Outputs larger than the last-level cache are written with non-temporal stores.
  constexpr std::uint64_t kStreamOutput = std::uint64_t{64} << 20;
  std::uint64_t out_bytes = es_;
  for (auto n : view.shape()) out_bytes *= static_cast<std::uint64_t>(n);
  stream_ = !to_chunk && out_bytes >= kStreamOutput;
}

void TaskCopier::copy(std::byte* chunk) const {
  if (plan_.points) {
    const std::int64_t vs = view_.ndim() ? view_.strides()[0] : 0;
    for (const auto& [off, k] : task_.points) {
      std::byte* c = chunk + off * static_cast<std::int64_t>(es_);
      std::byte* v = view_.data() + k * vs;
      if (to_chunk_)
        copy_elem(c, v, es_);
      else
        copy_elem(v, c, es_);
    }
    return;
  }
  if (task_.dims.empty()) {  // 0-d
    if (to_chunk_)
      copy_elem(chunk, view_.data(), es_);
    else
      copy_elem(view_.data(), chunk, es_);
    return;
  }
  run(task_.dims, chunk);
}

void TaskCopier::copy_slabs(std::int64_t first, std::int64_t end, const std::byte* data) {
  // The part of the task's dimension-0 run inside [first, end), as if the chunk began at `first`.
  const DimChunkMap& m0 = *task_.dims[0];
  const std::int64_t a = std::max(first, m0.chunk_start), e = std::min(end, m0.chunk_start + m0.count);
  if (a >= e) return;
  DimChunkMap part = m0;
  part.chunk_start = a - first;
  part.count = e - a;
  part.out_start = m0.out_start + (a - m0.chunk_start) * m0.out_step;
  dims_[0] = &part;
  run(dims_, const_cast<std::byte*>(data));
  dims_[0] = task_.dims[0];
}

void TaskCopier::run(const std::vector<const DimChunkMap*>& dims, std::byte* chunk) const {
  OrthoCopy oc{dims, chunk_strides_, view_strides_, es_, to_chunk_};
  oc.find_flat(spec_.shape);
  oc.stream = stream_;
  oc.run(chunk, view_.data(), 0);
  if (oc.stream) store_fence();
}

void copy_task(const Plan& plan, const ChunkTask& task, std::byte* chunk, const ChunkSpec& spec, const NDView& view,
               bool to_chunk) {
  TaskCopier(plan, task, spec, view, to_chunk).copy(chunk);
}

void fill_task(const Plan& plan, const ChunkTask& task, const ChunkSpec& spec, const NDView& view) {
  const std::size_t es = spec.dtype.size();
  auto* fill = reinterpret_cast<std::byte*>(const_cast<std::uint8_t*>(spec.fill_value.data()));
  if (plan.points) {
    const std::int64_t vs = view.ndim() ? view.strides()[0] : 0;
    for (const auto& p : task.points) copy_elem(view.data() + p.second * vs, fill, es);
    return;
  }
  if (task.dims.empty()) {
    copy_elem(view.data(), fill, es);
    return;
  }
  const std::vector<std::int64_t> zero(task.dims.size(), 0);  // every chunk position reads the fill
  OrthoCopy oc{task.dims, zero, view_strides_per_dim(plan, view), es, false};
  oc.run(fill, view.data(), 0);
}

std::byte* contiguous_target(const Plan& plan, const ChunkTask& task, const ChunkGrid& g, const NDView& view) {
  if (plan.points || task.dims.empty() || !view.is_c_contiguous()) return nullptr;
  if (!g.chunk_is_full(task.chunk)) return nullptr;
  const std::size_t rank = task.dims.size();
  auto cs = [&](std::size_t d) { return g.chunk_extent(d, task.chunk[d]); };  // no allocation per task
  for (std::size_t d = 0; d < rank; ++d) {
    const auto& m = *task.dims[d];
    if (plan.out_dim_of[d] == SIZE_MAX || !m.unit() || m.chunk_start != 0 || m.count != cs(d)) return nullptr;
  }
  // The box is contiguous when every dimension after the first non-trivial one spans the view.
  std::size_t f = 0;
  while (f < rank && cs(f) == 1) ++f;
  for (std::size_t d = f + 1; d < rank; ++d)
    if (cs(d) != view.shape()[plan.out_dim_of[d]]) return nullptr;
  std::int64_t off = 0;
  for (std::size_t d = 0; d < task.dims.size(); ++d)
    off += task.dims[d]->out_start * view.strides()[plan.out_dim_of[d]];
  return view.data() + off;
}

}  // namespace zarrpp
