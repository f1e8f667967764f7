// Each codec through zarrpp's pipeline vs the raw library call on the same bytes, same thread.
// Prints a Markdown table; the ratio column is pipeline time / raw time (1.00 = no overhead).
#include <blosc.h>
#include <isa-l/crc.h>
#include <libdeflate.h>
#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench_util.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;

namespace {
struct Row {
  std::string codec, data, op;
  double raw_s, pipe_s, ratio_compressed;
};

CodecPipeline make(const std::string& json, std::size_t n) {
  std::vector<CodecMetadata> cs = {
      CodecMetadata::from_json(Json::parse(R"({"name":"bytes","configuration":{"endian":"little"}})"), "b")};
  if (!json.empty()) cs.push_back(CodecMetadata::from_json(Json::parse(json), "c"));
  return CodecPipeline::from_metadata(cs, ChunkSpec{{static_cast<std::int64_t>(n)}, DataType::uint16, Bytes(2, 0)});
}
}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 1u << 20;  // elements per chunk (2 MiB default)
  if (argc > 1) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(argv[1], &end, 10);
    if (argc > 2 || *end != '\0' || v < 1 || v > (std::size_t{1} << 30)) {
      std::fprintf(stderr, "usage: zarrpp-bench-codecs [ELEMENTS]  (uint16 elements per chunk, 1 to 2^30)\n");
      return 2;
    }
    n = static_cast<std::size_t>(v);
  }
  bench::print_machine_facts(".");  // (in memory: the file system does not matter)
  const int reps = 15;
  std::vector<Row> rows;
  for (const char* kind : {"smooth", "noisy"}) {
    const auto data = std::string(kind) == "smooth" ? bench::smooth_u16(n) : bench::noisy_u16(n);
    const std::span<const std::uint8_t> in(reinterpret_cast<const std::uint8_t*>(data.data()), n * 2);
    Bytes out(n * 2);
    // gzip level 1 (libdeflate)
    {
      auto p = make(R"({"name":"gzip","configuration":{"level":1}})", n);
      auto* c = libdeflate_alloc_compressor(1);
      auto* d = libdeflate_alloc_decompressor();
      Bytes enc(libdeflate_gzip_compress_bound(c, in.size()));
      std::size_t m = 0;
      const double raw_e = bench::median_seconds(
          reps, [&] { m = libdeflate_gzip_compress(c, in.data(), in.size(), enc.data(), enc.size()); });
      const double pipe_e = bench::median_seconds(reps, [&] { (void)p.encode(in); });
      const double raw_d = bench::median_seconds(
          reps, [&] { libdeflate_gzip_decompress(d, enc.data(), m, out.data(), out.size(), nullptr); });
      const Bytes pe = p.encode(in);
      const double pipe_d = bench::median_seconds(reps, [&] { p.decode(pe, out); });
      rows.push_back(
          {"gzip 1", kind, "encode", raw_e, pipe_e, static_cast<double>(in.size()) / static_cast<double>(m)});
      rows.push_back(
          {"gzip 1", kind, "decode", raw_d, pipe_d, static_cast<double>(in.size()) / static_cast<double>(m)});
      libdeflate_free_compressor(c);
      libdeflate_free_decompressor(d);
    }
    // zstd level 1
    {
      auto p = make(R"({"name":"zstd","configuration":{"level":1}})", n);
      auto* c = ZSTD_createCCtx();
      auto* d = ZSTD_createDCtx();
      Bytes enc(ZSTD_compressBound(in.size()));
      std::size_t m = 0;
      const double raw_e = bench::median_seconds(
          reps, [&] { m = ZSTD_compressCCtx(c, enc.data(), enc.size(), in.data(), in.size(), 1); });
      const double pipe_e = bench::median_seconds(reps, [&] { (void)p.encode(in); });
      const double raw_d =
          bench::median_seconds(reps, [&] { ZSTD_decompressDCtx(d, out.data(), out.size(), enc.data(), m); });
      const Bytes pe = p.encode(in);
      const double pipe_d = bench::median_seconds(reps, [&] { p.decode(pe, out); });
      rows.push_back(
          {"zstd 1", kind, "encode", raw_e, pipe_e, static_cast<double>(in.size()) / static_cast<double>(m)});
      rows.push_back(
          {"zstd 1", kind, "decode", raw_d, pipe_d, static_cast<double>(in.size()) / static_cast<double>(m)});
      ZSTD_freeCCtx(c);
      ZSTD_freeDCtx(d);
    }
    // blosc lz4 + shuffle, one thread
    {
      auto p = make(
          R"({"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":2,"blocksize":0}})",
          n);
      Bytes enc(in.size() + BLOSC_MAX_OVERHEAD);
      int m = 0;
      const double raw_e = bench::median_seconds(reps, [&] {
        m = blosc_compress_ctx(5, BLOSC_SHUFFLE, 2, in.size(), in.data(), enc.data(), enc.size(), "lz4", 0, 1);
      });
      const double pipe_e = bench::median_seconds(reps, [&] { (void)p.encode(in); });
      const double raw_d =
          bench::median_seconds(reps, [&] { blosc_decompress_ctx(enc.data(), out.data(), out.size(), 1); });
      const Bytes pe = p.encode(in);
      const double pipe_d = bench::median_seconds(reps, [&] { p.decode(pe, out); });
      rows.push_back({"blosc lz4 shuffle", kind, "encode", raw_e, pipe_e, static_cast<double>(in.size()) / m});
      rows.push_back({"blosc lz4 shuffle", kind, "decode", raw_d, pipe_d, static_cast<double>(in.size()) / m});
    }
    // crc32c (ISA-L): its limit is the checksum plus the one copy that places the bytes
    // (appending the checksum on encode, handing the payload over on decode).
    {
      auto p = make(R"({"name":"crc32c"})", n);
      unsigned sink = 0;
      Bytes copy(in.size() + 4);
      const double raw = bench::median_seconds(reps, [&] {
        std::memcpy(copy.data(), in.data(), in.size());
        sink ^= crc32_iscsi(const_cast<std::uint8_t*>(in.data()), static_cast<int>(in.size()), ~0u);
      });
      const double pipe_e = bench::median_seconds(reps, [&] { (void)p.encode(in); });
      const Bytes pe = p.encode(in);
      const double pipe_d = bench::median_seconds(reps, [&] { p.decode(pe, out); });
      rows.push_back({"crc32c", kind, "encode", raw, pipe_e, 1.0});
      rows.push_back({"crc32c", kind, "decode", raw, pipe_d, 1.0});
      if (sink == 42) std::puts("");
    }
  }
  const double mb = static_cast<double>(n * 2) / 1e9;
  std::printf("Chunk: %zu uint16 elements (%.1f MiB), median of %d runs, one thread.\n\n", n,
              static_cast<double>(n * 2) / (1 << 20), reps);
  std::printf("| codec | data | op | ratio | raw library GB/s | zarrpp pipeline GB/s | pipeline time / raw time |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const auto& r : rows)
    std::printf("| %s | %s | %s | %.2f | %.2f | %.2f | %.3f |\n", r.codec.c_str(), r.data.c_str(), r.op.c_str(),
                r.ratio_compressed, mb / r.raw_s, mb / r.pipe_s, r.pipe_s / r.raw_s);
  return 0;
}
