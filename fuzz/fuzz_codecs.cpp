// Every codec's decoder on arbitrary bytes: a CodecError or the exact chunk size, never a crash
// and never a write past the output buffer. The first byte picks the codec.
#include <cstdint>
#include <string>
#include <vector>

#include "zarrpp/zarrpp.hpp"

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
  };
  return c;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static std::vector<zarrpp::CodecPipeline> pipes = [] {
    std::vector<zarrpp::CodecPipeline> p;
    for (const auto& c : codecs()) {
      std::vector<zarrpp::CodecMetadata> cs;
      for (const auto& j : zarrpp::Json::parse(c)) cs.push_back(zarrpp::CodecMetadata::from_json(j, "fuzz"));
      p.push_back(zarrpp::CodecPipeline::from_metadata(cs, zarrpp::ChunkSpec{{8, 8}, zarrpp::DataType::uint16, {0, 0}}));
    }
    return p;
  }();
  const auto& p = pipes[data[0] % pipes.size()];
  zarrpp::Bytes out(128);
  try {
    p.decode(std::span<const std::uint8_t>(data + 1, size - 1), out);
  } catch (const zarrpp::CodecError&) {
  }
  return 0;
}
