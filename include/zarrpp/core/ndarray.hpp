#pragma once
/// @file
/// A small strided N-d view and an owning C-order array: how data goes in and out of zarrpp.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "zarrpp/core/dtype.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp {

/// Elements per dimension (or a position: one index per dimension).
using Shape = std::vector<std::int64_t>;

/// An optional shape that also takes a braced list, so designated initialisers read naturally:
/// {.shards = {4, 4}, .lower_bound = {-4}} (std::optional<Shape> would need Shape{...} there).
class OptionalShape : public std::optional<Shape> {
 public:
  using std::optional<Shape>::optional;
  OptionalShape() = default;  ///< no shape
  /// @{
  /// A shape from a braced list, a Shape or an optional one.
  OptionalShape(std::initializer_list<std::int64_t> dims)
      : std::optional<Shape>(Shape(dims)) {}                                     // NOLINT(google-explicit-constructor)
  OptionalShape(Shape s) : std::optional<Shape>(std::move(s)) {}                 // NOLINT(google-explicit-constructor)
  OptionalShape(std::optional<Shape> s) : std::optional<Shape>(std::move(s)) {}  // NOLINT(google-explicit-constructor)
  /// @}
  /// Assignment goes through the constructors above: = {4, 4}, = Shape{...}, = std::nullopt, = {}.
  friend bool operator==(const OptionalShape& a, const OptionalShape& b) {
    return static_cast<const std::optional<Shape>&>(a) == static_cast<const std::optional<Shape>&>(b);
  }
};

namespace detail {
/// Large buffers (chunks, compressed chunks, outputs) come from a per-thread cache of memory blocks:
/// memory that is freed and asked for again is not returned to the kernel and faulted back in page
/// by page, which on virtual machines costs more than the copy into it. Blocks above kBigCacheMax
/// go straight to the kernel. Blocks are backed by transparent huge pages where the kernel allows,
/// except on a virtual machine whose balloon reports freed memory to its host (a huge page is then
/// the block the host took back; ZARRPP_HUGE_PAGES=0/1 overrides).
inline constexpr std::size_t kBigAlloc = std::size_t{256} << 10;
void* big_allocate(std::size_t bytes);
void big_deallocate(void* p, std::size_t bytes) noexcept;
/// Maps in the pages of a freshly allocated output before it is filled: `concurrency` threads each
/// fault in one contiguous part (MADV_POPULATE_WRITE), so no page is faulted twice by threads that
/// fill neighbouring pieces of it, and the kernel's zeroing is shared out. Contents are unchanged
/// (only pages not yet mapped are made); small buffers and failures are left alone, since the fill
/// faults them in anyway.
void prefault(void* p, std::size_t bytes, std::size_t concurrency) noexcept;
/// prefault for a buffer the caller gave (read_into): only when it looks fresh — private anonymous
/// memory (new[], NumPy) whose first page is not mapped in yet. A buffer used before, or a file
/// mapping (np.memmap, whose pages a prefault would read in and dirty ahead of the fill, all of
/// them before the first is filled), is left to the fill.
void prefault_if_fresh(void* p, std::size_t bytes, std::size_t concurrency) noexcept;
}  // namespace detail

/// An allocator whose construct() default-initialises, so Bytes(n) does not zero n bytes that are
/// about to be overwritten (chunk and compression buffers are large and hot); large buffers come
/// from detail::big_allocate.
template <class T>
struct default_init_allocator : std::allocator<T> {
  /// @{
  /// What the standard asks of an allocator.
  using value_type = T;
  /// The allocator for another type U.
  template <class U>
  struct rebind {
    using other = default_init_allocator<U>;  ///< this allocator for U
  };
  default_init_allocator() = default;
  template <class U>
  default_init_allocator(const default_init_allocator<U>&) noexcept {}  // NOLINT
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  T* allocate(std::size_t n) {
    if (n >= detail::kBigAlloc / sizeof(T) && n <= SIZE_MAX / sizeof(T))
      return static_cast<T*>(detail::big_allocate(n * sizeof(T)));
    return std::allocator<T>::allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n >= detail::kBigAlloc / sizeof(T) && n <= SIZE_MAX / sizeof(T))
      return detail::big_deallocate(p, n * sizeof(T));
    std::allocator<T>::deallocate(p, n);
  }
  /// @}
  template <class U>
  friend bool operator==(const default_init_allocator&, const default_init_allocator<U>&) noexcept {
    return true;
  }
};

/// Byte buffers. Bytes(n) leaves its contents uninitialised; Bytes(n, 0) zeroes them.
using Bytes = std::vector<std::uint8_t, default_init_allocator<std::uint8_t>>;

std::string shape_str(std::span<const std::int64_t> shape);    ///< "(9, 4)", as Python prints a tuple
std::int64_t shape_size(std::span<const std::int64_t> shape);  ///< checked product

/// C-order strides in bytes.
std::vector<std::int64_t> c_strides(std::span<const std::int64_t> shape, std::size_t itemsize);
/// Fortran-order strides in bytes.
std::vector<std::int64_t> f_strides(std::span<const std::int64_t> shape, std::size_t itemsize);

/// Non-owning view of N-d data with byte strides (C order, Fortran order, or any other layout).
class NDView {
 public:
  NDView() = default;  ///< an empty view (no data)

  /// @{
  /// A view of `data`: elements of `dtype`, `shape`, and the distance in bytes between neighbours
  /// along each dimension (`byte_strides`, negative allowed).
  NDView(void* data, DataType dtype, Shape shape, std::vector<std::int64_t> byte_strides);
  NDView(const void* data, DataType dtype, Shape shape, std::vector<std::int64_t> byte_strides)
      : NDView(const_cast<void*>(data), dtype, std::move(shape), std::move(byte_strides)) {}
  /// @}
  /// @{
  /// A view of contiguous data in C order (the last index varies fastest).
  static NDView c_order(void* data, DataType dtype, Shape shape);
  static NDView c_order(const void* data, DataType dtype, Shape shape) {
    return c_order(const_cast<void*>(data), dtype, std::move(shape));
  }
  /// @}
  /// @{
  /// A view of contiguous data in Fortran order (the first index varies fastest).
  static NDView f_order(void* data, DataType dtype, Shape shape);
  static NDView f_order(const void* data, DataType dtype, Shape shape) {
    return f_order(const_cast<void*>(data), dtype, std::move(shape));
  }
  /// @}

  std::byte* data() const { return data_; }                              ///< the first element
  const DataType& dtype() const { return dtype_; }                       ///< the elements' type
  const Shape& shape() const { return shape_; }                          ///< elements per dimension
  const std::vector<std::int64_t>& strides() const { return strides_; }  ///< byte strides per dimension
  std::size_t ndim() const { return shape_.size(); }                     ///< number of dimensions
  std::int64_t size() const;                                             ///< number of elements
  bool is_c_contiguous() const;                                          ///< C order without gaps

  std::byte* ptr(std::span<const std::int64_t> index) const;  ///< the element at `index` (unchecked type)

  /// The element at `index` as a T (SelectionError when T is not the view's data type).
  template <class T>
  T& at(std::initializer_list<std::int64_t> index) const {
    check_type(dtype_v<T>());
    return *reinterpret_cast<T*>(ptr(std::span<const std::int64_t>(index.begin(), index.size())));
  }
  void check_type(const DataType& t) const;  ///< SelectionError unless the elements are of type `t`

 private:
  std::byte* data_ = nullptr;
  DataType dtype_;
  Shape shape_;
  std::vector<std::int64_t> strides_;
};

/// Owning, C-order, contiguous N-d array.
class NDArray {
 public:
  NDArray() = default;                   ///< an empty array
  NDArray(DataType dtype, Shape shape);  ///< zero-initialised

  /// Contents left undefined: for outputs whose every element is written next (saves a pass over
  /// memory; a 1 GiB read would otherwise zero 1 GiB first).
  static NDArray uninitialized(DataType dtype, Shape shape);

  /// An array of `shape` whose every element is `value` (its data type is T's).
  template <class T>
  static NDArray full(Shape shape, T value) {
    NDArray a(dtype_v<T>(), std::move(shape));
    T* p = a.data<T>();
    for (std::int64_t i = 0; i < a.size(); ++i) p[i] = value;
    return a;
  }
  /// An array of `shape` holding `values` in C order (SelectionError when they do not fill it).
  template <class T>
  static NDArray from_vector(Shape shape, const std::vector<T>& values) {
    NDArray a(dtype_v<T>(), std::move(shape));
    if (static_cast<std::int64_t>(values.size()) != a.size())
      throw SelectionError(ErrorCode::shape_mismatch, "NDArray::from_vector: " + std::to_string(values.size()) +
                                                          " values do not fill shape " + shape_str(a.shape()));
    if (!values.empty()) std::memcpy(a.raw_data(), values.data(), values.size() * sizeof(T));
    return a;
  }
  /// Copies any view into a new C-order array.
  static NDArray copy_of(const NDView& v);

  const DataType& dtype() const { return dtype_; }      ///< the elements' type
  const Shape& shape() const { return shape_; }         ///< elements per dimension
  std::size_t ndim() const { return shape_.size(); }    ///< number of dimensions
  std::int64_t size() const { return size_; }           ///< number of elements
  std::size_t nbytes() const { return bytes_.size(); }  ///< size in bytes

  /// @{
  /// The elements' bytes, untyped.
  std::byte* raw_data() { return reinterpret_cast<std::byte*>(bytes_.data()); }
  const std::byte* raw_data() const { return reinterpret_cast<const std::byte*>(bytes_.data()); }
  /// @}
  /// @{
  /// The buffer holding the elements.
  Bytes& bytes() { return bytes_; }
  const Bytes& bytes() const { return bytes_; }
  /// @}

  /// @{
  /// The elements as T (SelectionError when T is not the array's data type).
  template <class T>
  T* data() {
    check_type(dtype_v<T>());
    return reinterpret_cast<T*>(bytes_.data());
  }
  template <class T>
  const T* data() const {
    check_type(dtype_v<T>());
    return reinterpret_cast<const T*>(bytes_.data());
  }
  /// @}
  /// The elements as a vector of T, in C order.
  template <class T>
  std::vector<T> to_vector() const {
    const T* p = data<T>();
    return std::vector<T>(p, p + size_);
  }
  /// @{
  /// The element at `index` as a T (SelectionError when T is not the array's data type).
  template <class T>
  T& at(std::initializer_list<std::int64_t> index) {
    return view().at<T>(index);
  }
  template <class T>
  const T& at(std::initializer_list<std::int64_t> index) const {
    return view().at<T>(index);
  }
  /// @}

  /// A view of the whole array.
  NDView view() const { return NDView::c_order(static_cast<const void*>(bytes_.data()), dtype_, shape_); }
  /// Arrays pass where views are expected.
  operator NDView() const { return view(); }  // NOLINT: arrays pass where views are expected

  void reshape(Shape new_shape);             ///< a new shape of the same number of elements
  void check_type(const DataType& t) const;  ///< SelectionError unless the elements are of type `t`
  friend bool operator==(const NDArray& a, const NDArray& b) {
    return a.dtype_ == b.dtype_ && a.shape_ == b.shape_ && a.bytes_ == b.bytes_;
  }

 private:
  DataType dtype_;
  Shape shape_;
  std::int64_t size_ = 0;
  Bytes bytes_;
};

/// Copies src into dst element by element (same dtype and shape), along contiguous runs.
void copy_view(const NDView& src, const NDView& dst);

}  // namespace zarrpp
