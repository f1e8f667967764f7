#pragma once
// The numcodecs codecs' registry entries, one per file of this folder (numcodecs_entries lists them).
#include <memory>
#include <utility>
#include <vector>

#include "../roles.hpp"

namespace zarrpp::numcodecs {

// An array -> array filter's entry.
template <class Make>
CodecEntry filter_entry(const char* name, Make make) {
  CodecEntry e{name, codec::Role::array_to_array};
  e.make_a2a = make;
  return e;
}

// A bytes -> bytes codec's entry: its shorthand defaults, and, when `v2` is set, a Zarr v2
// compressor under its numcodecs id and keys (numcodecs.shuffle is a v2 filter instead).
template <class Make>
CodecEntry compressor_entry(const char* name, Make make, std::vector<std::pair<std::string, Json>> shorthand, bool v2) {
  CodecEntry e{name, codec::Role::bytes_to_bytes};
  e.make_b2b = make;
  e.shorthand = std::move(shorthand);
  if (v2)
    e.v2_compressor =
        CodecEntry::V2Compressor{std::string(name).substr(10), [](const Json& cfg, std::size_t) { return cfg; },
                                 [](const Json& cfg) { return cfg; }};
  return e;
}

CodecEntry delta_entry();
CodecEntry fixedscaleoffset_entry();
CodecEntry quantize_entry();
CodecEntry astype_entry();
CodecEntry bitround_entry();
CodecEntry packbits_entry();
CodecEntry categorize_entry();
CodecEntry zlib_entry();
CodecEntry lz4_entry();
CodecEntry bz2_entry();
CodecEntry lzma_entry();
CodecEntry shuffle_entry();
// numcodecs.gzip, numcodecs.zstd and numcodecs.blosc (the native codecs under those names).
void add_aliases(std::vector<CodecEntry>& out);

}  // namespace zarrpp::numcodecs
