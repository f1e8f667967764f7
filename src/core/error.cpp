#include "zarrpp/core/error.hpp"

namespace zarrpp {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_metadata:
      return "invalid_metadata";
    case ErrorCode::unsupported:
      return "unsupported";
    case ErrorCode::wrong_node_type:
      return "wrong_node_type";
    case ErrorCode::invalid_selection:
      return "invalid_selection";
    case ErrorCode::invalid_index:
      return "invalid_index";
    case ErrorCode::index_out_of_bounds:
      return "index_out_of_bounds";
    case ErrorCode::dtype_mismatch:
      return "dtype_mismatch";
    case ErrorCode::shape_mismatch:
      return "shape_mismatch";
    case ErrorCode::corrupt_data:
      return "corrupt_data";
    case ErrorCode::store_failure:
      return "store_failure";
    case ErrorCode::invalid_key:
      return "invalid_key";
    case ErrorCode::read_only:
      return "read_only";
    case ErrorCode::not_found:
      return "not_found";
    case ErrorCode::already_exists:
      return "already_exists";
    case ErrorCode::conflict:
      return "conflict";
    case ErrorCode::limit_exceeded:
      return "limit_exceeded";
    case ErrorCode::invalid_argument:
      return "invalid_argument";
  }
  return "unknown";
}

void throw_like(const Error& e, const std::string& what) {
  const ErrorCode c = e.code();
  // Most derived first.
  if (dynamic_cast<const UnsupportedError*>(&e)) throw UnsupportedError(what);
  if (dynamic_cast<const MetadataError*>(&e)) throw MetadataError(c, what);
  if (dynamic_cast<const SelectionError*>(&e)) throw SelectionError(c, what);
  if (dynamic_cast<const CodecError*>(&e)) throw CodecError(c, what);
  if (dynamic_cast<const NotFoundError*>(&e)) throw NotFoundError(what);
  if (dynamic_cast<const UncertainWriteError*>(&e)) throw UncertainWriteError(what);
  if (dynamic_cast<const StoreError*>(&e)) throw StoreError(c, what);
  if (dynamic_cast<const ConflictError*>(&e)) throw ConflictError(c, what);
  if (dynamic_cast<const LimitError*>(&e)) throw LimitError(what);
  if (dynamic_cast<const ArgumentError*>(&e)) throw ArgumentError(what);
  throw Error(c, what);
}

}  // namespace zarrpp
