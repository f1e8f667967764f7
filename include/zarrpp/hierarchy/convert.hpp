#pragma once
/// @file
/// Converting Zarr v2 nodes (arrays and groups, recursively) to Zarr v3, and back, without rewriting
/// chunks.
#include <cstdint>
#include <string>
#include <vector>

#include "zarrpp/array/array.hpp"
#include "zarrpp/metadata/metadata.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp {

/// What a format conversion did: the nodes converted, the chunks copied, and notes on what changed
/// beyond the format.
struct ConvertReport {
  std::int64_t nodes = 0;          ///< nodes converted
  std::int64_t chunks_copied = 0;  ///< chunks copied byte for byte (to another place only)

  /// What the conversion changed beyond the format, one line each: a null fill value replaced by
  /// the type's zero, an xarray variable's missing value kept as its _FillValue attribute (or why
  /// it cannot be), an interrupted conversion finished.
  std::vector<std::string> notes;
};

/// The v3 form of a v2 array's metadata: the same codecs (numcodecs filters and compressors under
/// their "numcodecs.*" names), the "v2" chunk key encoding (so the chunk keys stay), attributes
/// from .zattrs with "_ARRAY_DIMENSIONS" moved to dimension_names, a null fill value replaced by
/// the type's zero. An array xarray wrote (it has "_ARRAY_DIMENSIONS") whose fill value is its
/// missing value gets the attribute "_FillValue" in xarray's encoding (xarray_fill_attribute), as
/// xarray reads a v3 array's missing value from there. `notes` (optional) receives what changed.
ArrayMetadata v3_metadata_of(const ArrayMetadata& v2, std::vector<std::string>* notes = nullptr,
                             const std::string& shown = "/");

/// In place: for the node at `path` (and, for a group, every node under it) writes zarr.json, then
/// removes .zarray/.zgroup/.zattrs/.zmetadata. No chunk is read or written. A node that has both
/// zarr.json and v2 documents (an interrupted conversion) is finished; a v3 node is left alone.
ConvertReport convert_to_v3(const StorePtr& store, const std::string& path = "");
/// To another place: the destination gets the v3 nodes, each array's chunks copied byte for byte
/// before its zarr.json. The source is not changed. Refuses overlapping source and destination.
/// `progress`, when set, is told about each chunk copied (its stored bytes).
ConvertReport convert_to_v3(const StorePtr& src, const std::string& src_path, const StorePtr& dst,
                            const std::string& dst_path, bool overwrite = false,
                            const ProgressCallback& progress = nullptr);

/// The v2 form of a v3 array's metadata (v2 metadata is returned as it is): the same codecs as
/// .zarray's compressor and filters (an array to array codec other than a full transpose, sharding,
/// crc32c, a regular_bounded grid, extra fields or an unnamed dimension: UnsupportedError naming
/// it), the "v2" chunk key encoding with the same separator, dimension_names as
/// "_ARRAY_DIMENSIONS". For an xarray variable (it has dimension names), as xarray reads a v2
/// array's missing value from the fill value: the attribute "_FillValue" goes when it states the
/// fill value, and without that attribute the fill value becomes null (none) when
/// `every_chunk_stored` (else it stays, noted). `notes` (optional) receives what changed.
ArrayMetadata v2_metadata_of(const ArrayMetadata& v3, bool every_chunk_stored,
                             std::vector<std::string>* notes = nullptr, const std::string& shown = "/");

/// Back to v2, in place: for the node at `path` (and, for a group, every node under it) writes
/// .zattrs and .zarray/.zgroup (and .zmetadata for a group that was consolidated), then removes
/// zarr.json. No chunk is read or written, so every array's chunk keys must be v2 keys already (as
/// a converted array's are); that and the v2 form of every node are checked before anything is
/// written. A v2 node is left alone; running it again finishes an interrupted conversion.
ConvertReport convert_to_v2(const StorePtr& store, const std::string& path = "");
/// To another place: each array's chunks are copied byte for byte under their v2 keys before its
/// .zarray. The source is not changed. Refuses overlapping source and destination. `progress`, when
/// set, is told about each chunk copied (its stored bytes).
ConvertReport convert_to_v2(const StorePtr& src, const std::string& src_path, const StorePtr& dst,
                            const std::string& dst_path, bool overwrite = false,
                            const ProgressCallback& progress = nullptr);

}  // namespace zarrpp
