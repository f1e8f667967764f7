// The numcodecs codecs that Zarr v2 arrays use as filters and compressors, under the names
// zarr-python 3 gives them in zarr.json ("numcodecs.<id>", configuration = the numcodecs
// configuration without "id"). Each one, in a file of its own here, reproduces numcodecs' bytes
// and arithmetic:
//   array -> array: delta, fixedscaleoffset, quantize, astype, bitround (on the elements,
//                   flattened), packbits (bools to bits), categorize (text to label numbers)
//   bytes -> bytes: zlib, lz4, bz2, lzma, shuffle, and gzip/zstd/blosc under their numcodecs names
#include <vector>

#include "entries.hpp"

namespace zarrpp {

std::vector<CodecEntry> numcodecs_entries() {
  std::vector<CodecEntry> out;
  out.push_back(numcodecs::delta_entry());
  out.push_back(numcodecs::fixedscaleoffset_entry());
  out.push_back(numcodecs::quantize_entry());
  out.push_back(numcodecs::astype_entry());
  out.push_back(numcodecs::bitround_entry());
  out.push_back(numcodecs::packbits_entry());
  out.push_back(numcodecs::categorize_entry());
  out.push_back(numcodecs::zlib_entry());
  out.push_back(numcodecs::lz4_entry());
  out.push_back(numcodecs::bz2_entry());
  out.push_back(numcodecs::lzma_entry());
  out.push_back(numcodecs::shuffle_entry());
  numcodecs::add_aliases(out);
  return out;
}

}  // namespace zarrpp
