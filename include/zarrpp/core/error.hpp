#pragma once
// One exception hierarchy for everything zarrpp throws. Messages name the field, key, index or
// bound that failed so a user can act on them.
#include <stdexcept>
#include <string>

namespace zarrpp {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// zarr.json is malformed, mistyped, out of range or uses something unknown.
class MetadataError : public Error {
 public:
  using Error::Error;
};

// A selection or the data given for it does not fit the array.
class SelectionError : public Error {
 public:
  using Error::Error;
};

// Chunk bytes could not be encoded or decoded (corrupt, truncated, checksum mismatch, ...).
class CodecError : public Error {
 public:
  using Error::Error;
};

// The store failed, or a key is invalid.
class StoreError : public Error {
 public:
  using Error::Error;
};

// A key or node that was asked for does not exist.
class NotFoundError : public StoreError {
 public:
  using StoreError::StoreError;
};

// A feature that zarrpp recognises but does not support (e.g. a storage transformer).
class UnsupportedError : public MetadataError {
 public:
  using MetadataError::MetadataError;
};

// A concurrent change won (compare-and-swap failed after its retries), or the store cannot
// guarantee the atomicity an operation needs.
class ConflictError : public Error {
 public:
  using Error::Error;
};

}  // namespace zarrpp
