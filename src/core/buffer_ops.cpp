#include "buffer_ops.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace zarrpp {

namespace {
void box_rec(const std::uint8_t* a, const std::vector<std::int64_t>& astr, std::uint8_t* b,
             const std::vector<std::int64_t>& bstr, const Shape& shape, std::size_t d, std::size_t run, bool a_to_b) {
  if (d + 1 == shape.size()) {
    if (a_to_b)
      std::memcpy(b, a, run);
    else
      std::memcpy(const_cast<std::uint8_t*>(a), b, run);
    return;
  }
  for (std::int64_t i = 0; i < shape[d]; ++i)
    box_rec(a + i * astr[d], astr, b + i * bstr[d], bstr, shape, d + 1, run, a_to_b);
}
}  // namespace

void extract_box(const std::uint8_t* src, const Shape& src_shape, const Shape& start, const Shape& shape,
                 std::uint8_t* dst, std::size_t esize) {
  if (shape.empty()) {
    std::memcpy(dst, src, esize);
    return;
  }
  if (shape_size(shape) == 0) return;
  const auto sstr = c_strides(src_shape, esize);
  const auto dstr = c_strides(shape, esize);
  std::int64_t off = 0;
  for (std::size_t d = 0; d < start.size(); ++d) off += start[d] * sstr[d];
  box_rec(src + off, sstr, dst, dstr, shape, 0, static_cast<std::size_t>(shape.back()) * esize, true);
}

void insert_box(const std::uint8_t* src, const Shape& shape, std::uint8_t* dst, const Shape& dst_shape,
                const Shape& start, std::size_t esize) {
  if (shape.empty()) {
    std::memcpy(dst, src, esize);
    return;
  }
  if (shape_size(shape) == 0) return;
  const auto sstr = c_strides(shape, esize);
  const auto dstr = c_strides(dst_shape, esize);
  std::int64_t off = 0;
  for (std::size_t d = 0; d < start.size(); ++d) off += start[d] * dstr[d];
  box_rec(dst + off, dstr, const_cast<std::uint8_t*>(src), sstr, shape, 0,
          static_cast<std::size_t>(shape.back()) * esize, false);
}

bool all_equal(std::span<const std::uint8_t> data, std::span<const std::uint8_t> value) {
  const std::size_t es = value.size();
  if (es == 0 || data.size() % es != 0) return false;
  if (std::all_of(value.begin(), value.end(), [&](std::uint8_t b) { return b == value[0]; })) {
    const std::uint8_t v = value[0];
    // Compare word by word: this runs on every written chunk.
    std::size_t i = 0;
    std::uint64_t pat;
    std::memset(&pat, v, 8);
    for (; i + 8 <= data.size(); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, data.data() + i, 8);
      if (w != pat) return false;
    }
    for (; i < data.size(); ++i)
      if (data[i] != v) return false;
    return true;
  }
  for (std::size_t i = 0; i < data.size(); i += es)
    if (std::memcmp(data.data() + i, value.data(), es) != 0) return false;
  return true;
}

void fill_with(std::span<std::uint8_t> data, std::span<const std::uint8_t> value) {
  const std::size_t es = value.size();
  if (data.empty()) return;
  if (std::all_of(value.begin(), value.end(), [&](std::uint8_t b) { return b == value[0]; })) {
    std::memset(data.data(), value[0], data.size());
    return;
  }
  std::memcpy(data.data(), value.data(), es);
  std::size_t filled = es;
  while (filled < data.size()) {  // doubling copies
    const std::size_t n = std::min(filled, data.size() - filled);
    std::memcpy(data.data() + filled, data.data(), n);
    filled += n;
  }
}

// ---- Scratch ------------------------------------------------------------------------------------

namespace {
// Buffers given back by finished chunks, per thread (nested use, e.g. a shard inside a chunk
// task, takes a second one).
thread_local std::vector<Bytes> t_spare;
}  // namespace

Scratch::Scratch(std::size_t bytes) : size_(bytes) {
  for (auto it = t_spare.begin(); it != t_spare.end(); ++it) {
    if (it->capacity() >= bytes) {
      buf_ = std::move(*it);
      t_spare.erase(it);
      break;
    }
  }
  buf_.resize(bytes);
}

Scratch::~Scratch() {
  if (buf_.capacity() > kScratchKeep || t_spare.size() >= 4) return;  // freed with buf_
  try {
    t_spare.push_back(std::move(buf_));
  } catch (...) {
    // no room to keep it: it is freed
  }
}

}  // namespace zarrpp
