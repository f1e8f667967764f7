// Chunk key decoding is strict and round-trips: decode(k) succeeds only for canonical keys.
#include <cstdint>
#include <string>

#include "zarrpp/zarrpp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string key(reinterpret_cast<const char*>(data), size);
  for (const auto& enc : {zarrpp::ChunkKeyEncoding::default_('/'), zarrpp::ChunkKeyEncoding::default_('.'),
                          zarrpp::ChunkKeyEncoding::v2('.'), zarrpp::ChunkKeyEncoding::v2('/')}) {
    for (std::size_t rank = 0; rank <= 4; ++rank) {
      const auto idx = enc.decode(key, rank);
      if (idx && enc.encode(*idx) != key) __builtin_trap();  // only canonical keys decode
    }
  }
  try {
    zarrpp::validate_key(key);
  } catch (const zarrpp::StoreError&) {
  }
  return 0;
}
