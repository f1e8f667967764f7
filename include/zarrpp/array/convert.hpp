#pragma once
// Converting Zarr v2 nodes (arrays and groups, recursively) to Zarr v3 without rewriting chunks.
#include <cstdint>
#include <string>
#include <vector>

#include "zarrpp/metadata/metadata.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp {

struct ConvertReport {
  std::int64_t nodes = 0;          // nodes converted
  std::int64_t chunks_copied = 0;  // chunks copied byte for byte (to another place only)
  // What the conversion changed beyond the format, one line each: a null fill value replaced by
  // the type's zero, an xarray variable's missing value kept as its _FillValue attribute (or why
  // it cannot be), an interrupted conversion finished.
  std::vector<std::string> notes;
};

// The v3 form of a v2 array's metadata: the same codecs (numcodecs filters and compressors under
// their "numcodecs.*" names), the "v2" chunk key encoding (so the chunk keys stay), attributes
// from .zattrs with "_ARRAY_DIMENSIONS" moved to dimension_names, a null fill value replaced by
// the type's zero. An array xarray wrote (it has "_ARRAY_DIMENSIONS") whose fill value is its
// missing value gets the attribute "_FillValue" in xarray's encoding (xarray_fill_attribute), as
// xarray reads a v3 array's missing value from there. `notes` (optional) receives what changed.
ArrayMetadata v3_metadata_of(const ArrayMetadata& v2, std::vector<std::string>* notes = nullptr,
                             const std::string& shown = "/");

// In place: for the node at `path` (and, for a group, every node under it) writes zarr.json, then
// removes .zarray/.zgroup/.zattrs/.zmetadata. No chunk is read or written. A node that has both
// zarr.json and v2 documents (an interrupted conversion) is finished; a v3 node is left alone.
ConvertReport convert_to_v3(const StorePtr& store, const std::string& path = "");
// To another place: the destination gets the v3 nodes, each array's chunks copied byte for byte
// before its zarr.json. The source is not changed. Refuses overlapping source and destination.
ConvertReport convert_to_v3(const StorePtr& src, const std::string& src_path, const StorePtr& dst,
                            const std::string& dst_path, bool overwrite = false);

}  // namespace zarrpp
