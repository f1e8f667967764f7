// What an ArraySpec means: the metadata Array::create writes for it, made and checked without a
// store (the CLI and Python validate with it before they make anything), and the checks every
// new array's metadata passes before it is written.
#include <optional>
#include <string>
#include <vector>

#include "../codec/chunk_codec.hpp"
#include "engine.hpp"
#include "zarrpp/array/array.hpp"
#include "zarrpp/codec/chain.hpp"
#include "zarrpp/core/checked.hpp"
#include "zarrpp/grid/chunk_grid.hpp"

namespace zarrpp {

namespace {

// The whole pipeline is given: the parts would be silently ignored, so refuse them.
void refuse_parts_with_codecs(const ArraySpec& spec) {
  std::vector<std::string> also;
  if (spec.compressor) also.emplace_back("compressor");
  if (spec.crc32c) also.emplace_back("crc32c");
  if (spec.shards) also.emplace_back("shards");
  if (spec.endian) also.emplace_back("endian");
  if (!spec.filters.empty()) also.emplace_back("filters");
  if (!spec.compressors.empty()) also.emplace_back("compressors");
  if (spec.serializer) also.emplace_back("serializer");
  if (spec.order != 'C') also.emplace_back("order");
  if (also.empty()) return;
  std::string list;
  for (const auto& a : also) list += (list.empty() ? "" : ", ") + a;
  throw ArgumentError("ArraySpec: `codecs` gives the whole pipeline, so " + list +
                      " cannot be given too (put them into `codecs` instead)");
}

// The parts of the spec as codec::build_chain takes them.
codec::ChainSpec chain_spec(const ArraySpec& spec) {
  if (spec.compressor && !spec.compressors.empty())
    throw ArgumentError("ArraySpec: give `compressor` or `compressors`, not both");
  if (spec.serializer && spec.endian)
    throw ArgumentError("ArraySpec: `serializer` states the byte order, so `endian` cannot be given too");
  if (spec.order != 'C' && spec.order != 'F')
    throw ArgumentError(std::string("order: must be 'C' or 'F', got '") + spec.order + "'");
  if (spec.order == 'F' && spec.zarr_format != 2)
    throw ArgumentError("order='F' is a Zarr v2 setting; for Zarr v3 state a transpose filter instead");
  codec::ChainSpec c{
      .filters = spec.filters, .serializer = spec.serializer, .crc32c = spec.crc32c, .shards = spec.shards};
  if (spec.order == 'F' && spec.shape.size() > 1) {
    codec::Transpose t;
    for (auto d = static_cast<std::int64_t>(spec.shape.size()); d-- > 0;) t.order.push_back(d);
    c.filters.insert(c.filters.begin(), t);
  }
  // The byte order is the bytes codec's; a variable-length type has none.
  if (spec.endian && !spec.dtype.is_vlen()) c.serializer = codec::BytesCodec{*spec.endian};
  c.compressors = spec.compressor ? std::vector<codec::Any>{*spec.compressor} : spec.compressors;
  return c;
}

codec::Chain build_codecs(const ArraySpec& spec) {
  if (!spec.codecs) return codec::build_chain(chain_spec(spec), spec.dtype, spec.chunks);
  refuse_parts_with_codecs(spec);
  return {*spec.codecs, spec.chunks};
}

}  // namespace

namespace {

// A spec with rectilinear sizes as the plain spec of its first chunk (or shard), and the grid.
std::optional<ChunkGridMetadata> rectilinear_grid(ArraySpec& spec) {
  const bool chunks = !spec.chunk_sizes.empty(), shards = !spec.shard_sizes.empty();
  if (!chunks && !shards) return std::nullopt;
  const char* what = chunks ? "chunk_sizes" : "shard_sizes";
  if (chunks && (shards || spec.shards))
    throw ArgumentError(
        "rectilinear chunks with sharding are not supported; make the shards rectilinear instead "
        "(shard_sizes, with regular inner chunks)");
  if (shards && spec.shards) throw ArgumentError("shard_sizes: give shard_sizes or shards, not both");
  if (chunks && !spec.chunks.empty()) throw ArgumentError("chunk_sizes: give chunk_sizes or chunks, not both");
  if (spec.lower_bound || spec.origin)
    throw UnsupportedError(std::string(what) + ": a rectilinear grid has no lower bound or origin");
  const auto& sizes = chunks ? spec.chunk_sizes : spec.shard_sizes;
  if (sizes.size() != spec.shape.size())
    throw MetadataError(std::string(what) + ": " + std::to_string(sizes.size()) + " dimensions given, the shape " +
                        shape_str(spec.shape) + " has " + std::to_string(spec.shape.size()));
  Shape first;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    const auto& v = sizes[d];
    const std::string at = std::string(what) + "[" + std::to_string(d) + "]";
    if (v.empty()) throw MetadataError(at + ": no sizes given");
    std::int64_t sum = 0;
    for (const auto n : v) {
      if (n < 1) throw MetadataError(at + ": sizes must be >= 1, got " + std::to_string(n));
      sum = checked::add(sum, n, "chunk sizes");
    }
    // They cover the extent; the last may pass its end (a shard of whole inner chunks), but no
    // size may lie wholly past it.
    if (sum < spec.shape[d] || sum - v.back() >= spec.shape[d])
      throw MetadataError(at + ": sizes " + shape_str(v) + " add up to " + std::to_string(sum) +
                          "; they must cover the extent " + std::to_string(spec.shape[d]) +
                          ", the last passing its end by less than its size");
    first.push_back(v[0]);
  }
  auto grid = regular_chunk_shape(sizes) ? std::nullopt : std::optional(ChunkGridMetadata::rectilinear_sizes(sizes));
  (chunks ? spec.chunks : spec.shards.emplace()) = first;
  spec.chunk_sizes.clear();
  spec.shard_sizes.clear();
  return grid;  // none when regular: the plain spec says it all
}

}  // namespace

ArrayMetadata array_metadata(const ArraySpec& spec_in) {
  ArraySpec spec = spec_in;
  const auto rect = rectilinear_grid(spec);
  if (rect && spec.zarr_format == 2)
    throw UnsupportedError("Zarr format 2 does not support rectilinear chunk grids (chunks of different sizes)");
  const std::size_t r = spec.shape.size();
  auto need_rank = [&](const Shape& v, const char* what) {
    if (v.size() != r)
      throw MetadataError(std::string(what) + ": " + shape_str(v) + " has " + std::to_string(v.size()) +
                          " entries, the shape " + shape_str(spec.shape) + " has " + std::to_string(r));
  };
  need_rank(spec.chunks, "chunks");
  for (std::size_t d = 0; d < r; ++d)
    if (spec.chunks[d] < 1)
      throw MetadataError("chunks[" + std::to_string(d) + "]: must be >= 1, got " + std::to_string(spec.chunks[d]));
  const codec::Chain chain = build_codecs(spec);
  const Shape& grid_chunks = chain.grid_chunks;
  ArrayMetadata m;
  m.shape = spec.shape;
  m.data_type = spec.dtype;
  if (spec.lower_bound || spec.origin) {
    const Shape lower = spec.lower_bound ? *spec.lower_bound : Shape(r, 0);
    const Shape origin = spec.origin ? *spec.origin : lower;
    need_rank(lower, "lower_bound");
    need_rank(origin, "origin");
    m.chunk_grid = ChunkGridMetadata::regular_bounded(grid_chunks, origin, lower);
  } else {
    m.chunk_grid = rect ? *rect : ChunkGridMetadata::regular(grid_chunks);
  }
  m.chunk_key_encoding = spec.chunk_key_encoding;
  const bool no_fill = spec.fill_value && spec.fill_value->is_null();
  if (no_fill && spec.zarr_format != 2)
    throw ArgumentError("fill_value null (no fill value) is Zarr v2's only: a Zarr v3 array states its fill value");
  const auto fill = spec.fill_value && !no_fill
                        ? std::optional<Json>(canonical_fill_value(*spec.fill_value, spec.dtype))
                        : std::nullopt;
  m.fill_value.bytes = fill ? parse_fill_value(*fill, spec.dtype) : default_fill_value(spec.dtype);
  if (no_fill) m.fill_value.v2_stated = Json(nullptr);
  m.codecs = codec::to_metadata(chain.codecs, spec.dtype);
  if (!spec.attributes.is_object()) throw MetadataError("attributes: must be a JSON object");
  m.attributes = spec.attributes;
  m.dimension_names = spec.dimension_names;
  if (spec.zarr_format != 0 && spec.zarr_format != 2 && spec.zarr_format != 3)
    throw ArgumentError("zarr_format: " + std::to_string(spec.zarr_format) + " is not 2 or 3");
  if (spec.zarr_format == 2) {
    if (spec.lower_bound || spec.origin)
      throw UnsupportedError("lower_bound/origin: a Zarr v2 array cannot store a lower bound; create it as Zarr v3");
    if (spec.chunk_key_encoding.kind == ChunkKeyEncoding::Kind::Default && spec.chunk_key_encoding.separator == '/')
      m.chunk_key_encoding = ChunkKeyEncoding::v2('.');
    m.codecs = CodecPipeline::create(m.codecs, ChunkSpec{m.chunk_grid.chunk_shape, m.data_type, m.fill_element()})
                   .to_metadata();
    m = codec::as_v2(m);
  }
  return checked_for_create(m);
}

ArrayMetadata checked_for_create(const ArrayMetadata& meta) {
  ArrayMetadata m = meta;
  m.validate_for_write();
  // The codecs' automatic parameters resolved, so zarr.json states them.
  m.codecs =
      CodecPipeline::create(m.codecs, ChunkSpec{m.chunk_grid.chunk_shape, m.data_type, m.fill_element()}).to_metadata();
  // A v2 array's .zarray states its codecs again: brought in line with the codecs given.
  if (m.zarr_format == 2) m = codec::as_v2(m);
  const auto snap = make_snapshot(m, std::nullopt);
  check_chunks_writable(snap->pipeline);
  if (!snap->grid.is_regular()) {  // and the largest chunk of a rectilinear grid
    Shape largest;
    for (const auto& v : m.chunk_grid.distinct_sizes()) largest.push_back(v.back());
    check_chunks_writable(CodecPipeline::create(m.codecs, ChunkSpec{largest, m.data_type, m.fill_element()}));
  }
  return m;
}

}  // namespace zarrpp
