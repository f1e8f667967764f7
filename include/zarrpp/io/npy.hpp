#pragma once
/// @file
/// NumPy .npy files (format versions 1.0, 2.0 and 3.0): every core data type, both byte orders,
/// C and Fortran order.
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "zarrpp/core/ndarray.hpp"

namespace zarrpp::npy {

/// Parses .npy bytes into a C-order, native-endian array. Throws Error naming what is wrong.
NDArray parse(std::span<const std::uint8_t> bytes);
NDArray load(const std::filesystem::path& path);  ///< parse() of a file's bytes

/// A .npy file opened for reading its data in pieces (never memory-mapped, so a file truncated
/// meanwhile is an error, not a crash). The constructor checks the header against the file's size.
class Reader {
 public:
  explicit Reader(const std::filesystem::path& path);  ///< opens and checks the file
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  const DataType& dtype() const;     ///< the elements' type (native byte order)
  const Shape& shape() const;        ///< the array's shape
  bool fortran_order() const;        ///< the data is in Fortran order (for more than one dimension)
  std::uint64_t data_bytes() const;  ///< the size of the data after the header
  /// Reads data bytes [at, at + n) as the file lays them out into `p`, `concurrency` threads each
  /// reading (and faulting in) one contiguous part, then converts them to native byte order and
  /// checks bool values, in place. Throws if the file changed since it was opened.
  void read(std::uint64_t at, std::size_t n, void* p, std::size_t concurrency);
  /// Throws StoreError if the file's size or modification time changed since it was opened.
  void check_unchanged() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A .npy file read whole for writing into an array: its data read once, straight into one buffer
/// (Reader::read), converted in place. `view` is the array in the file's order: C, or Fortran as a
/// strided view of the same bytes (no copy). Everything is checked before it returns.
struct Loaded {
  NDArray storage;  ///< the data as the file lays it out
  NDView view;      ///< the array, C or Fortran order
};
/// Loads a .npy file with `concurrency` threads (see Loaded).
Loaded load_view(const std::filesystem::path& path, std::size_t concurrency);

/// Writes a .npy file (C order, little-endian) as its data arrives, so a large selection need not
/// be held in memory whole. A regular file (new or existing) is written under a temporary name in
/// the same directory and renamed into place by commit(): until then, and if anything fails, the
/// old file is untouched and no partial file remains (the temporary is removed on every error path,
/// and by remove_unfinished_temporaries() on a signal). Anything else (a FIFO, /dev/stdout) is
/// written in place.
class Writer {
 public:
  /// Starts writing an array of `dtype` and `shape` to `path` (the header first).
  Writer(const std::filesystem::path& path, const DataType& dtype, const Shape& shape);
  ~Writer();  ///< without commit(): removes the temporary file
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  /// The next bytes of the data, in C order.
  void write(std::span<const std::uint8_t> bytes);
  /// Checks that all the data arrived and puts the file in place.
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
/// Removes the temporary files of Writers that have not committed. Async-signal-safe: for a
/// program's SIGINT/SIGTERM handler (the CLI's), so an interrupted `get --out` leaves no partial
/// file. A Writer also removes, before it starts, temporaries of the same file left by processes
/// of this machine that are gone (killed with SIGKILL).
void remove_unfinished_temporaries() noexcept;

/// Serialises a view (any strides) as a version 1.0 .npy (2.0 if the header needs it),
/// little-endian, C order.
Bytes serialize(const NDView& view);
void save(const std::filesystem::path& path, const NDView& view);  ///< writes `view` as a .npy file (Writer in one go)

/// The header's descr for a data type, as a Python literal: a quoted dtype string ('<i4', '|b1',
/// '<c16', '|V3' for r24, '<f2') or a structured type's list ([('a', '<i4'), ('b', '<f8', (2,))]).
std::string descr_of(const DataType& t);

}  // namespace zarrpp::npy
