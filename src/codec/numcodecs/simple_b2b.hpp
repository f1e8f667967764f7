#pragma once
// The base of the numcodecs bytes-to-bytes codecs.
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "../roles.hpp"

namespace zarrpp::numcodecs {

// Decoding that may produce at most max_out bytes; decode_into checks the exact size.
class SimpleB2B : public BytesToBytesCodec {
 public:
  explicit SimpleB2B(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const override {
    const Bytes b = decode(in, out.size());
    if (b.size() != out.size())
      decode_fail(name_, "decoded " + std::to_string(b.size()) + " bytes, expected " + std::to_string(out.size()));
    if (!b.empty()) std::memcpy(out.data(), b.data(), b.size());
  }
  std::optional<std::size_t> encoded_size(std::size_t) const override { return std::nullopt; }

 protected:
  std::string name_;
};

}  // namespace zarrpp::numcodecs
