#pragma once
/// @file
/// One exception hierarchy for everything zarrpp throws. Messages name the field, key, index or
/// bound that failed so a user can act on them; codes say what kind of failure it was, so callers
/// (the CLI, the Python bindings, tests) never have to match message text.
#include <stdexcept>
#include <string>

namespace zarrpp {

/// The kind of an Error, for code that reacts to kinds rather than messages.
enum class ErrorCode {
  invalid_metadata,     ///< zarr.json (or other metadata) malformed, mistyped or out of range
  unsupported,          ///< recognised, but zarrpp does not support it (a storage transformer, ...)
  wrong_node_type,      ///< an array where a group was expected, or the reverse
  invalid_selection,    ///< a selection that cannot be applied (bad syntax, bad step, ...)
  index_out_of_bounds,  ///< an index outside the array (NumPy raises IndexError)
  invalid_index,        ///< an index of a kind or shape the indexing rules refuse (NumPy: IndexError)
  dtype_mismatch,       ///< data of another data type than the array's (NumPy raises TypeError)
  shape_mismatch,       ///< data whose shape does not fit the selection (NumPy raises ValueError)
  corrupt_data,         ///< chunk bytes that cannot be decoded (corrupt, truncated, checksum)
  store_failure,        ///< the store failed (I/O error, server error, ...)
  invalid_key,          ///< a store key or path that is not allowed (.., absolute, NUL, ...)
  read_only,            ///< a write to a store that cannot be written
  not_found,            ///< the node, key or file asked for does not exist
  already_exists,       ///< a node is already there (create without overwrite)
  conflict,             ///< a concurrent change won, or atomicity cannot be guaranteed
  limit_exceeded,       ///< a size beyond what zarrpp or a codec can handle, int64 overflow
  invalid_argument,     ///< a value given by the caller (option, file format, ...) is not valid
};

/// The code's name, e.g. "not_found".
const char* to_string(ErrorCode code);

/// The base of every exception zarrpp throws: a one-line message saying what went wrong and
/// where, and an ErrorCode naming the kind.
class Error : public std::runtime_error {
 public:
  /// An error of kind `code` whose message is `what` (one line: what went wrong, and where).
  Error(ErrorCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  ErrorCode code() const noexcept { return code_; }  ///< the kind of error

 private:
  ErrorCode code_;
};

/// zarr.json is malformed, mistyped, out of range or uses something unknown.
class MetadataError : public Error {
 public:
  /// @{
  /// The error whose message is `what`, of kind ErrorCode::invalid_metadata unless `code` says otherwise.
  explicit MetadataError(const std::string& what) : Error(ErrorCode::invalid_metadata, what) {}
  MetadataError(ErrorCode code, const std::string& what) : Error(code, what) {}
  /// @}
};

/// A feature that zarrpp recognises but does not support (e.g. a storage transformer).
class UnsupportedError : public MetadataError {
 public:
  /// The error whose message is `what` (ErrorCode::unsupported).
  explicit UnsupportedError(const std::string& what) : MetadataError(ErrorCode::unsupported, what) {}
};

/// A selection or the data given for it does not fit the array (codes invalid_selection, invalid_index,
/// index_out_of_bounds, dtype_mismatch, shape_mismatch).
class SelectionError : public Error {
 public:
  /// @{
  /// The error whose message is `what`, of kind ErrorCode::invalid_selection unless `code` says otherwise.
  explicit SelectionError(const std::string& what) : Error(ErrorCode::invalid_selection, what) {}
  SelectionError(ErrorCode code, const std::string& what) : Error(code, what) {}
  /// @}
};

/// Chunk bytes could not be encoded or decoded (corrupt, truncated, checksum mismatch, ...).
class CodecError : public Error {
 public:
  /// @{
  /// The error whose message is `what`, of kind ErrorCode::corrupt_data unless `code` says otherwise.
  explicit CodecError(const std::string& what) : Error(ErrorCode::corrupt_data, what) {}
  CodecError(ErrorCode code, const std::string& what) : Error(code, what) {}
  /// @}
};

/// The store failed (store_failure), a key is invalid (invalid_key), or the store cannot be
/// written (read_only).
class StoreError : public Error {
 public:
  /// @{
  /// The error whose message is `what`, of kind ErrorCode::store_failure unless `code` says otherwise.
  explicit StoreError(const std::string& what) : Error(ErrorCode::store_failure, what) {}
  StoreError(ErrorCode code, const std::string& what) : Error(code, what) {}
  /// @}
};

/// A write that failed in a way that may still take effect: the request reached a remote server
/// but its answer was lost, and what is stored now does not show it. Only reading the value later
/// tells; a caller must not take the write as undone (nor as done).
class UncertainWriteError : public StoreError {
 public:
  /// The error whose message is `what`.
  explicit UncertainWriteError(const std::string& what) : StoreError(what) {}
};

/// A conditional write refused after its answer was lost, with another writer's value stored now:
/// its first copy may have landed and been built on by that writer, so it is neither written nor
/// not written, and is not sent again. A caller that recomputes its change from the stored value
/// and recognises its own result (a document update) may treat it as refused.
class SupersededWriteError : public UncertainWriteError {
 public:
  /// The error whose message is `what`.
  explicit SupersededWriteError(const std::string& what) : UncertainWriteError(what) {}
};

/// A key, node or file that was asked for does not exist.
class NotFoundError : public StoreError {
 public:
  /// The error whose message is `what` (ErrorCode::not_found).
  explicit NotFoundError(const std::string& what) : StoreError(ErrorCode::not_found, what) {}
};

/// A concurrent change won (compare-and-swap kept failing), the store cannot guarantee the
/// atomicity an operation needs (conflict), or a node already exists (already_exists).
class ConflictError : public Error {
 public:
  /// @{
  /// The error whose message is `what`, of kind ErrorCode::conflict unless `code` says otherwise.
  explicit ConflictError(const std::string& what) : Error(ErrorCode::conflict, what) {}
  ConflictError(ErrorCode code, const std::string& what) : Error(code, what) {}
  /// @}
};

/// A size beyond a limit: int64 overflow, a chunk larger than zarrpp or a codec can hold.
class LimitError : public Error {
 public:
  /// The error whose message is `what` (ErrorCode::limit_exceeded).
  explicit LimitError(const std::string& what) : Error(ErrorCode::limit_exceeded, what) {}
};

/// A value the caller gave is not valid: a command-line option, a .npy file's header, an option
/// of a store or a codec given in code.
class ArgumentError : public Error {
 public:
  /// The error whose message is `what` (ErrorCode::invalid_argument).
  explicit ArgumentError(const std::string& what) : Error(ErrorCode::invalid_argument, what) {}
};

/// Throws an error of the same class and code as `e` with another message (to add context).
[[noreturn]] void throw_like(const Error& e, const std::string& what);

}  // namespace zarrpp
