#pragma once
// NumPy broadcasting of the data a write is given to the shape its selection selects.
#include "zarrpp/core/dtype.hpp"
#include "zarrpp/core/ndarray.hpp"

namespace zarrpp {

// `data` as a view of `shape` (zero strides where it is broadcast; extra leading dimensions of
// length 1 dropped). SelectionError: dtype_mismatch when `data` does not hold `dtype`'s elements,
// shape_mismatch when it cannot be broadcast.
NDView broadcast_to(const NDView& data, const Shape& shape, const DataType& dtype);

}  // namespace zarrpp
