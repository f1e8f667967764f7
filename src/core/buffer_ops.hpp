#pragma once
// Operations on C-order element buffers that the codec and array layers share.
#include <cstddef>
#include <cstdint>
#include <span>

#include "zarrpp/core/ndarray.hpp"

namespace zarrpp {

// Copies the box [start, start+shape) of a C-order array `src` (src_shape) into a C-order array
// `dst` of shape `shape`, or the reverse. Element size in bytes.
void extract_box(const std::uint8_t* src, const Shape& src_shape, const Shape& start, const Shape& shape,
                 std::uint8_t* dst, std::size_t esize);
void insert_box(const std::uint8_t* src, const Shape& shape, std::uint8_t* dst, const Shape& dst_shape,
                const Shape& start, std::size_t esize);
// Whether every element equals the fill value.
bool all_equal(std::span<const std::uint8_t> data, std::span<const std::uint8_t> value);
// Sets every element to the fill value.
void fill_with(std::span<std::uint8_t> data, std::span<const std::uint8_t> value);

// A buffer for one chunk, borrowed from the calling thread's pool and given back on destruction.
// Buffers up to kScratchKeep bytes are kept for the thread's next chunk (no page faults on reuse);
// a larger one is freed when given back, so one huge chunk does not pin its memory forever.
class Scratch {
 public:
  static constexpr std::size_t kScratchKeep = std::size_t{64} << 20;
  explicit Scratch(std::size_t bytes);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::uint8_t* data() { return buf_.data(); }
  std::span<std::uint8_t> span() { return {buf_.data(), size_}; }
  std::size_t size() const { return size_; }

 private:
  Bytes buf_;
  std::size_t size_;
};

}  // namespace zarrpp
