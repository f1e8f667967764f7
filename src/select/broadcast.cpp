#include "broadcast.hpp"

#include <string>
#include <vector>

#include "zarrpp/core/error.hpp"

namespace zarrpp {

NDView broadcast_to(const NDView& data, const Shape& shape, const DataType& dtype) {
  if (!(data.dtype().holds_same_elements(dtype)))
    throw SelectionError(ErrorCode::dtype_mismatch,
                         "data type mismatch: array holds " + dtype.name() + ", data is " + data.dtype().name());
  if (data.shape() == shape) return data;
  if (data.ndim() > shape.size()) {
    // NumPy accepts extra leading dimensions of length 1.
    const std::size_t extra = data.ndim() - shape.size();
    bool ones = true;
    for (std::size_t d = 0; d < extra; ++d) ones = ones && data.shape()[d] == 1;
    if (!ones)
      throw SelectionError(ErrorCode::shape_mismatch, "data of shape " + shape_str(data.shape()) +
                                                          " cannot be broadcast to the selection's shape " +
                                                          shape_str(shape));
    const Shape s(data.shape().begin() + static_cast<std::ptrdiff_t>(extra), data.shape().end());
    const std::vector<std::int64_t> st(data.strides().begin() + static_cast<std::ptrdiff_t>(extra),
                                       data.strides().end());
    return broadcast_to(NDView(data.data(), data.dtype(), s, st), shape, dtype);
  }
  std::vector<std::int64_t> strides(shape.size(), 0);
  const std::size_t off = shape.size() - data.ndim();
  for (std::size_t d = 0; d < data.ndim(); ++d) {
    const auto n = data.shape()[d];
    if (n == shape[off + d])
      strides[off + d] = data.strides()[d];
    else if (n != 1)
      throw SelectionError(ErrorCode::shape_mismatch, "data of shape " + shape_str(data.shape()) +
                                                          " cannot be broadcast to the selection's shape " +
                                                          shape_str(shape) + " (dimension " + std::to_string(off + d) +
                                                          ")");
  }
  return NDView(data.data(), dtype, shape, strides);
}

}  // namespace zarrpp
