// Every codec's decoder on arbitrary bytes: a CodecError or the exact chunk size, never a crash
// and never a write past the output buffer. The first byte picks the codec; the second picks
// which inner chunks the partial decoder is asked for, as an array read would (the path arrays
// use: shard index, coalesced ranges, views of uncompressed bytes, decoding into the output).
#include <cstdint>
#include <string>
#include <vector>

#include "codec/chunk_codec.hpp"
#include "zarrpp/zarrpp.hpp"

namespace {
// Checks every decoded unit is handed on whole and in bounds.
struct CheckingSink final : zarrpp::UnitSink {
  std::size_t requests = 0, unit_bytes = 0;
  std::int64_t slabs = 0;
  std::vector<std::uint8_t> seen;
  void missing(std::size_t i) override {
    if (i >= requests) __builtin_trap();
    seen[i] = 1;
  }
  void decoded(std::size_t i, std::int64_t a, std::int64_t b, const std::uint8_t* data) override {
    if (i >= requests || a < 0 || b > slabs || a >= b) __builtin_trap();
    volatile std::uint8_t sum = 0;
    for (std::size_t k = 0; k < unit_bytes / static_cast<std::size_t>(slabs) * static_cast<std::size_t>(b - a); ++k)
      sum ^= data[k];
    seen[i] = 1;
  }
};
}  // namespace

namespace {
const std::vector<std::string>& codecs() {
  static const std::vector<std::string> c = {
      R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"gzip","configuration":{"level":1}}])",
      R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1}}])",
      R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":2,"blocksize":0}}])",
      R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"blosc","configuration":{"cname":"zstd","clevel":5,"shuffle":"bitshuffle","typesize":2,"blocksize":0}}])",
      R"([{"name":"bytes","configuration":{"endian":"big"}},{"name":"crc32c"}])",
      R"([{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes","configuration":{"endian":"big"}}])",
      R"([{"name":"sharding_indexed","configuration":{"chunk_shape":[4,4],"codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"index_location":"end"}}])",
      R"([{"name":"sharding_indexed","configuration":{"chunk_shape":[4,4],"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"start"}}])",
      // Zarr v2 / numcodecs
      R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.zlib","configuration":{"level":1}}])",
      R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.lz4","configuration":{"acceleration":1}}])",
      R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.bz2","configuration":{"level":1}}])",
      R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.lzma","configuration":{}}])",
      R"([{"name":"numcodecs.delta","configuration":{"dtype":"<u2"}},{"name":"bytes","configuration":{"endian":"big"}},{"name":"numcodecs.shuffle","configuration":{"elementsize":2}}])",
      R"([{"name":"numcodecs.astype","configuration":{"encode_dtype":"<u1","decode_dtype":"<u2"}},{"name":"bytes","configuration":{}},{"name":"numcodecs.zlib","configuration":{"level":1}}])",
      // (on float16, two bytes as the others' uint16)
      R"(float16 [{"name":"numcodecs.bitround","configuration":{"keepbits":3}},{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.zlib","configuration":{"level":1}}])",
  };
  return c;
}

// A pipeline's codecs, and its data type: uint16 unless the entry names another first.
zarrpp::CodecPipeline pipeline_of(const std::string& entry, const zarrpp::Shape& shape) {
  zarrpp::DataType t = zarrpp::DataType::uint16;
  std::string json = entry;
  if (const auto sp = entry.find(' '); entry[0] != '[' && sp != std::string::npos) {
    t = zarrpp::DataType::parse(entry.substr(0, sp));
    json = entry.substr(sp + 1);
  }
  std::vector<zarrpp::CodecMetadata> cs;
  for (const auto& j : zarrpp::Json::parse(json)) cs.push_back(zarrpp::CodecMetadata::from_json(j, "fuzz"));
  return zarrpp::CodecPipeline::from_metadata(cs, zarrpp::ChunkSpec{shape, t, zarrpp::Bytes(t.size(), 0)});
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  static std::vector<zarrpp::CodecPipeline> pipes = [] {
    std::vector<zarrpp::CodecPipeline> p;
    for (const auto& c : codecs()) p.push_back(pipeline_of(c, {8, 8}));
    return p;
  }();
  const std::span<const std::uint8_t> encoded(data + 2, size - 2);
  if (data[0] % (pipes.size() + 2) == pipes.size() + 1) {
    // Bits packed from bools (packbits, then zlib): 13 elements, so the padding count matters.
    static const auto bits = pipeline_of(
        R"(bool [{"name":"numcodecs.packbits","configuration":{}},{"name":"bytes","configuration":{}},{"name":"numcodecs.zlib","configuration":{"level":1}}])",
        {13});
    zarrpp::Bytes b(13);
    try {
      bits.decode(encoded, b);
      for (const auto v : b)
        if (v > 1) __builtin_trap();  // truth values only
      (void)bits.encode(b);
    } catch (const zarrpp::CodecError&) {
    }
    return 0;
  }
  if (data[0] % (pipes.size() + 2) == pipes.size()) {
    // Variable-length strings (vlen-utf8 behind zstd), with a heap of their own.
    static const auto vlen_codecs = [] {
      std::vector<zarrpp::CodecMetadata> cs;
      for (const auto& j : zarrpp::Json::parse(R"([{"name":"vlen-utf8"},{"name":"zstd","configuration":{"level":1}}])"))
        cs.push_back(zarrpp::CodecMetadata::from_json(j, "fuzz"));
      return cs;
    }();
    auto heap = std::make_shared<zarrpp::VlenHeap>("");
    const auto vp = zarrpp::CodecPipeline::from_metadata(
        vlen_codecs, zarrpp::ChunkSpec{{4, 2}, zarrpp::DataType::string_t, zarrpp::Bytes(8, 0), heap});
    zarrpp::Bytes idx(64);
    try {
      vp.decode(encoded, idx);
      // Every index names a string of the heap, and the strings re-encode.
      (void)vp.encode(idx);
    } catch (const zarrpp::CodecError&) {
    }
    return 0;
  }
  const auto& p = pipes[data[0] % pipes.size()];
  const std::uint8_t pick = data[1];
  zarrpp::Bytes out(128);
  try {
    p.decode(encoded, out);
  } catch (const zarrpp::CodecError&) {
  }
  // The partial decoder over the same bytes: the units (inner chunks) the second byte selects.
  const auto layout = zarrpp::unit_layout(p);
  const std::size_t units = layout ? static_cast<std::size_t>(zarrpp::shape_size(layout->units_per_shard)) : 1;
  std::vector<zarrpp::UnitRead> reqs;
  zarrpp::Bytes direct(128);
  for (std::size_t u = 0; u < units; ++u)
    if ((pick >> (u % 8)) & 1) reqs.push_back({u, 0, 0, false, (pick & 0x80) ? direct.data() : nullptr});
  CheckingSink sink;
  sink.requests = reqs.size();
  sink.unit_bytes = layout ? static_cast<std::size_t>(zarrpp::shape_size(layout->unit_shape)) * 2 : 128;
  sink.slabs = layout ? layout->unit_shape[0] : 8;
  sink.seen.assign(reqs.size(), 0);
  zarrpp::BytesChunk src(encoded);
  try {
    zarrpp::partial_decoder(p, src)->read(reqs, sink);
    for (std::size_t i = 0; i < reqs.size(); ++i)
      if (!sink.seen[i] && !reqs[i].direct) __builtin_trap();  // every unit answered
  } catch (const zarrpp::CodecError&) {
  }
  return 0;
}
