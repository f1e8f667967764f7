#include "zarrpp/core/ndarray.hpp"

#include "zarrpp/core/checked.hpp"

namespace zarrpp {

std::string shape_str(std::span<const std::int64_t> shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::int64_t shape_size(std::span<const std::int64_t> shape) {
  for (auto x : shape)
    if (x < 0) throw SelectionError("negative extent in shape " + shape_str(shape));
  return checked::product(shape, "number of elements");
}

std::vector<std::int64_t> c_strides(std::span<const std::int64_t> shape, std::size_t itemsize) {
  std::vector<std::int64_t> s(shape.size());
  std::int64_t acc = static_cast<std::int64_t>(itemsize);
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc = checked::mul(acc, std::max<std::int64_t>(shape[i], 1), "strides");
  }
  return s;
}

std::vector<std::int64_t> f_strides(std::span<const std::int64_t> shape, std::size_t itemsize) {
  std::vector<std::int64_t> s(shape.size());
  std::int64_t acc = static_cast<std::int64_t>(itemsize);
  for (std::size_t i = 0; i < shape.size(); ++i) {
    s[i] = acc;
    acc = checked::mul(acc, std::max<std::int64_t>(shape[i], 1), "strides");
  }
  return s;
}

NDView::NDView(void* data, DataType dtype, Shape shape, std::vector<std::int64_t> byte_strides)
    : data_(static_cast<std::byte*>(data)), dtype_(dtype), shape_(std::move(shape)), strides_(std::move(byte_strides)) {
  if (strides_.size() != shape_.size())
    throw SelectionError("NDView: " + std::to_string(strides_.size()) + " strides for " +
                         std::to_string(shape_.size()) + " dimensions");
  shape_size(shape_);
}

NDView NDView::c_order(void* data, DataType dtype, Shape shape) {
  auto st = c_strides(shape, dtype.size());
  return NDView(data, dtype, std::move(shape), std::move(st));
}
NDView NDView::f_order(void* data, DataType dtype, Shape shape) {
  auto st = f_strides(shape, dtype.size());
  return NDView(data, dtype, std::move(shape), std::move(st));
}

std::int64_t NDView::size() const { return shape_size(shape_); }

bool NDView::is_c_contiguous() const {
  std::int64_t acc = static_cast<std::int64_t>(dtype_.size());
  for (std::size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] != 1 && strides_[i] != acc) return false;
    acc *= shape_[i];
  }
  return true;
}

std::byte* NDView::ptr(std::span<const std::int64_t> index) const {
  if (index.size() != shape_.size())
    throw SelectionError(ErrorCode::index_out_of_bounds, "index has " + std::to_string(index.size()) +
                                                             " dimensions, view has " + std::to_string(shape_.size()));
  std::int64_t off = 0;
  for (std::size_t d = 0; d < index.size(); ++d) {
    if (index[d] < 0 || index[d] >= shape_[d])
      throw SelectionError(ErrorCode::index_out_of_bounds, "index " + std::to_string(index[d]) +
                                                               " is out of bounds for dimension " + std::to_string(d) +
                                                               " with size " + std::to_string(shape_[d]));
    off += index[d] * strides_[d];
  }
  return data_ + off;
}

void NDView::check_type(const DataType& t) const {
  if (!(t == dtype_))
    throw SelectionError(ErrorCode::dtype_mismatch,
                         "data type mismatch: view holds " + dtype_.name() + ", accessed as " + t.name());
}

NDArray::NDArray(DataType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  size_ = shape_size(shape_);
  bytes_.assign(static_cast<std::size_t>(checked::mul(size_, static_cast<std::int64_t>(dtype_.size()), "array bytes")),
                0);
}

NDArray NDArray::uninitialized(DataType dtype, Shape shape) {
  NDArray a;
  a.dtype_ = dtype;
  a.shape_ = std::move(shape);
  a.size_ = shape_size(a.shape_);
  a.bytes_.resize(
      static_cast<std::size_t>(checked::mul(a.size_, static_cast<std::int64_t>(dtype.size()), "array bytes")));
  return a;
}

NDArray NDArray::copy_of(const NDView& v) {
  NDArray a = uninitialized(v.dtype(), v.shape());
  copy_view(v, a.view());
  return a;
}

void NDArray::reshape(Shape new_shape) {
  if (shape_size(new_shape) != size_)
    throw SelectionError(ErrorCode::shape_mismatch,
                         "cannot reshape " + shape_str(shape_) + " to " + shape_str(new_shape));
  shape_ = std::move(new_shape);
}

void NDArray::check_type(const DataType& t) const {
  if (!(t == dtype_))
    throw SelectionError(ErrorCode::dtype_mismatch,
                         "data type mismatch: array holds " + dtype_.name() + ", accessed as " + t.name());
}

namespace {
void copy_rec(const std::byte* s, std::byte* d, const NDView& src, const NDView& dst, std::size_t dim,
              std::size_t inner_dims, std::int64_t run_bytes) {
  if (dim == inner_dims) {
    std::memcpy(d, s, static_cast<std::size_t>(run_bytes));
    return;
  }
  const auto n = src.shape()[dim];
  const auto ss = src.strides()[dim], ds = dst.strides()[dim];
  for (std::int64_t i = 0; i < n; ++i) copy_rec(s + i * ss, d + i * ds, src, dst, dim + 1, inner_dims, run_bytes);
}
}  // namespace

void copy_view(const NDView& src, const NDView& dst) {
  if (!(src.dtype() == dst.dtype()))
    throw SelectionError(ErrorCode::dtype_mismatch,
                         "data type mismatch: cannot copy " + src.dtype().name() + " into " + dst.dtype().name());
  if (src.shape() != dst.shape())
    throw SelectionError(ErrorCode::shape_mismatch,
                         "shape mismatch: cannot copy " + shape_str(src.shape()) + " into " + shape_str(dst.shape()));
  if (src.size() == 0) return;
  // Find the longest trailing block that is contiguous in both.
  const std::size_t nd = src.ndim();
  std::int64_t run = static_cast<std::int64_t>(src.dtype().size());
  std::size_t inner = nd;
  while (inner > 0) {
    const std::size_t d = inner - 1;
    if (src.shape()[d] == 1 || (src.strides()[d] == run && dst.strides()[d] == run)) {
      run *= src.shape()[d];
      inner = d;
    } else {
      break;
    }
  }
  copy_rec(src.data(), dst.data(), src, dst, 0, inner, run);
}

}  // namespace zarrpp
