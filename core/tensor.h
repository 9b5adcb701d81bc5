#pragma once
// Tensor: a strided view of shared storage. Views (reshape, transpose, slice, expand, ...) share storage
// and differ only in shape, strides (in elements, row-major) and offset; nothing here knows of gradients.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"

namespace tg {

class StoragePtr;

/// A 64-byte aligned buffer with its own reference counts, held by tensors through StoragePtr. `version`
/// counts in-place writes, so that a value saved for later (by autograd, say) can tell it was modified.
/// Small buffers (up to kInlineBytes) sit in the same pool block as this header: one block per tensor.
class Storage {
 public:
  static constexpr int64_t kInlineBytes = 1024 - 64;  ///< a block of at most 1 KB: header (64 B) + buffer
  /// A new buffer of `nbytes` (uninitialised, version 0). Throws std::bad_alloc.
  static StoragePtr make(int64_t nbytes);
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data = nullptr;  ///< the buffer (null for 0 bytes)
  int64_t nbytes = 0;  ///< its size
  uint64_t version = 0;  ///< in-place writes so far

 private:
  friend class StoragePtr;
  friend class StorageVersion;
  explicit Storage(int64_t nbytes) : nbytes(nbytes) {}
  void drop_strong() noexcept;  // the last StoragePtr went: frees the buffer, and the block if no StorageVersion has it
  void drop_weak() noexcept;    // frees the block when its last holder goes
  // strong_: StoragePtrs. weak_: StorageVersions, plus one for all the StoragePtrs together (shared_ptr's
  // scheme). Atomic: parallel_tasks runs ops on several threads.
  std::atomic<uint32_t> strong_{1};
  std::atomic<uint32_t> weak_{1};
};

/// A counted handle on a Storage (what std::shared_ptr<Storage> was, without the separate control block).
class StoragePtr {
 public:
  StoragePtr() = default;
  StoragePtr(std::nullptr_t) {}  ///< a null handle
  StoragePtr(const StoragePtr& o) noexcept : p_(o.p_) {  ///< shares the storage
    if (p_) p_->strong_.fetch_add(1, std::memory_order_relaxed);
  }
  StoragePtr(StoragePtr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }  ///< takes the storage, leaving `o` null
  /// Takes `o`'s storage (copied or moved in), dropping this one's.
  StoragePtr& operator=(StoragePtr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~StoragePtr() {
    if (p_ && p_->strong_.fetch_sub(1, std::memory_order_acq_rel) == 1) p_->drop_strong();
  }
  Storage* get() const { return p_; }  ///< the storage, or null
  Storage* operator->() const { return p_; }  ///< the storage
  Storage& operator*() const { return *p_; }  ///< the storage
  explicit operator bool() const { return p_ != nullptr; }  ///< whether there is a storage
  /// The number of StoragePtrs to this storage (0 for none), like shared_ptr::use_count.
  long use_count() const { return p_ ? long(p_->strong_.load(std::memory_order_relaxed)) : 0; }
  friend bool operator==(const StoragePtr& a, const StoragePtr& b) { return a.p_ == b.p_; }  ///< the same storage
  friend bool operator==(const StoragePtr& a, std::nullptr_t) { return a.p_ == nullptr; }  ///< whether null

 private:
  friend class Storage;
  explicit StoragePtr(Storage* p) : p_(p) {}  // adopts the count Storage::make set
  Storage* p_ = nullptr;
};

/// A storage's version, readable for as long as this handle lives, without keeping the storage's buffer
/// (unless it is a small one in the header's block). For checks that a value was not written in place since
/// it was saved (autograd's Edge): like PyTorch's VariableVersion, shared by every view of the storage.
class StorageVersion {
 public:
  StorageVersion() = default;
  /// A handle on `s`'s version (an empty one when `s` is null).
  explicit StorageVersion(const StoragePtr& s) noexcept : p_(s.get()) {
    if (p_) p_->weak_.fetch_add(1, std::memory_order_relaxed);
  }
  StorageVersion(const StorageVersion&) = delete;
  StorageVersion& operator=(const StorageVersion&) = delete;
  StorageVersion(StorageVersion&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }  ///< takes `o`'s handle, leaving it empty
  /// Swaps with `o`.
  StorageVersion& operator=(StorageVersion&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~StorageVersion() {
    if (p_) p_->drop_weak();
  }
  explicit operator bool() const { return p_ != nullptr; }  ///< whether it refers to a storage
  /// The storage's version now (frozen once its last tensor is gone: nothing can write it then).
  uint64_t version() const { return p_->version; }

 private:
  Storage* p_ = nullptr;
};

/// The number of Storage buffers alive in the process: a debug counter, so tests can tell that a loop of
/// forward/backward/update frees everything it allocates.
int64_t live_storages();

/// Whether this build runs under AddressSanitizer. Storage then recycles no buffers (so that a use after
/// free is reported), and resident memory includes ASan's quarantine of freed blocks.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
inline constexpr bool kAddressSanitizer = __has_feature(address_sanitizer);
#else
inline constexpr bool kAddressSanitizer = false;
#endif

class Tensor;
namespace detail {
Tensor empty_for(const Shape& shape, DType dtype, const char* op);  // kernel_util.h
}

/// An n-d array of f32, f64, i64 or bool. Copying a Tensor copies the handle, not the data.
class Tensor {
 public:
  Tensor() = default;  ///< An undefined tensor (`defined()` is false).
  /// A view of `storage` with the given layout, as the views below make them (no check of bounds).
  Tensor(StoragePtr storage, Shape shape, Strides strides, int64_t offset, DType dtype);

  bool defined() const { return storage_ != nullptr; }  ///< false for a default-constructed tensor
  DType dtype() const { return dtype_; }  ///< the element type
  const Shape& shape() const { return shape_; }  ///< the size of each dim
  const Strides& strides() const { return strides_; }  ///< the step, in elements, between neighbours along each dim
  int64_t offset() const { return offset_; }  ///< the first element's index in the storage, in elements
  int64_t dim() const { return int64_t(shape_.size()); }  ///< the number of dims
  /// Size of dimension `d` (negative counts from the end); throws IndexError when out of range.
  int64_t size(int64_t d) const;
  int64_t numel() const { return numel_; }  ///< the number of elements, the product of the sizes
  /// Row-major with no gaps (size-1 dims may have any stride); known from construction.
  bool is_contiguous() const { return contiguous_; }
  const StoragePtr& storage() const { return storage_; }  ///< the shared buffer (null when undefined)
  /// Number of in-place writes to the underlying storage so far.
  uint64_t version() const { return storage_ ? storage_->version : 0; }

  /// Pointer to the first element (at `offset()`); T must match dtype (float, double, int64_t, bool), else
  /// DTypeError. Index it with `strides()`, or flat when `is_contiguous()`. Inline (a template in a header):
  /// kernels on small tensors call it several times per op, and the call cost more than the check.
  template <class T>
  T* data() const {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int64_t> ||
                  std::is_same_v<T, bool>);
    constexpr DType want = std::is_same_v<T, float> ? f32 : std::is_same_v<T, double> ? f64
                           : std::is_same_v<T, bool>                                   ? boolean : i64;
    if (!storage_ || dtype_ != want) [[unlikely]] data_error(want);
    // A zero-size tensor has no buffer, yet a view of it may carry an offset: null + offset is undefined.
    T* base = static_cast<T*>(storage_->data);
    return base ? base + offset_ : nullptr;
  }
  /// The value of a one-element tensor as double; ValueError when numel() != 1.
  double item() const;
  /// All elements in row-major order, converted to T (float, double, int64_t or bool).
  template <class T>
  std::vector<T> to_vector() const;

  // ---- views: share storage ----
  /// Same data, new shape (one size may be -1); copies only when the strides do not allow a view.
  Tensor reshape(const Shape& shape) const;
  /// Like reshape but never copies: throws ShapeError when the strides do not allow a view.
  Tensor view(const Shape& shape) const;
  /// Merges dims start..end (inclusive) into one.
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  /// Swaps dims d0 and d1 (negative count from the end); IndexError when out of range.
  Tensor transpose(int64_t d0, int64_t d1) const;
  /// Reorders dims: result dim i is input dim dims[i]; dims must be a permutation.
  Tensor permute(const std::vector<int64_t>& dims) const;
  /// Transpose of the last two dims (matrix transpose of a batch).
  Tensor mT() const;
  /// Elements start, start+step, ... < end along `dim`, Python-style clamping and negative indices; step > 0.
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  /// Elements start .. start+length-1 along `dim` (a view); a negative start counts from the end, as in
  /// PyTorch. IndexError when the range leaves [0, size).
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  /// Removes `dim`, keeping entry `index` (negative counts from the end).
  Tensor select(int64_t dim, int64_t index) const;
  /// Inserts a size-1 dim at `dim` (in [-dim()-1, dim()]).
  Tensor unsqueeze(int64_t dim) const;
  /// Removes `dim` if its size is 1 (otherwise returns the same view, as PyTorch).
  Tensor squeeze(int64_t dim) const;
  /// Removes every size-1 dim.
  Tensor squeeze() const;
  /// Broadcasts size-1 dims to `shape` with stride 0 (-1 keeps a size); new leading dims may be added.
  Tensor expand(const Shape& shape) const;

  // ---- copies ----
  /// This tensor if already contiguous, else a contiguous copy.
  Tensor contiguous() const;
  /// A contiguous copy that shares nothing with this tensor.
  Tensor clone() const;
  /// Converted to `dtype` (a copy, or this tensor when the dtype already matches); floats to i64 round
  /// toward zero. ValueError for a NaN, inf or out-of-range float converted to i64 (as copy_).
  Tensor to(DType dtype) const;

  // ---- in place (bump the storage version) ----
  // copy_, add_, mul_, addcmul_ and addcdiv_ throw ValueError when this tensor has elements that share
  // memory (an expand's stride-0 dims): the update would hit one address several times.
  /// Sets every element to `value`; ValueError for a value the dtype cannot hold (NaN or out of range into i64).
  Tensor& fill_(double value);
  /// Sets every element to 0.
  Tensor& zero_();
  /// Copies `src` (broadcast to this shape, converted to this dtype) into this tensor's elements.
  /// ValueError, before anything is written, when a float `src` holds NaN, inf or a value outside i64's
  /// range and this tensor is i64 (the conversion would be undefined behaviour).
  Tensor& copy_(const Tensor& src);
  // add_ and mul_ promote as PyTorch: they compute in result_type(*this, other) and round the result into this
  // tensor's dtype (f32 += f64 adds in f64); DTypeError when that result cannot be stored here (torch.can_cast:
  // a float result into i64 or bool, an i64 one into bool); bool tensors are refused as by add and mul.
  /// this += alpha * other (other broadcast to this shape). DTypeError for an alpha that is not an integer when
  /// the result is i64 (as PyTorch).
  Tensor& add_(const Tensor& other, double alpha = 1.0);
  /// this *= other elementwise (other broadcast to this shape).
  Tensor& mul_(const Tensor& other);
  /// this *= value, value a Python scalar (result_type(*this, value): i64 *= 0.5 is refused, as in PyTorch).
  Tensor& mul_(double value);
  /// this += value * a * b, elementwise (the optimizers' moment update). DTypeError unless a and b have this
  /// tensor's dtype (PyTorch 1.13 fails on mixed dtypes here too).
  Tensor& addcmul_(const Tensor& a, const Tensor& b, double value = 1.0);
  /// this += value * a / b, elementwise (the optimizers' parameter update); floating, dtypes as addcmul_.
  Tensor& addcdiv_(const Tensor& a, const Tensor& b, double value = 1.0);

 private:
  [[noreturn]] void data_error(DType want) const;  // data<T>()'s Error for an undefined tensor or a wrong T
  // empty()'s tensor: contiguous over all of `storage`, with the strides and element count empty() has worked
  // out and checked in one pass, so that each new tensor (several per op on small tensors) does not walk its
  // shape again.
  friend Tensor detail::empty_for(const Shape& shape, DType dtype, const char* op);
  Tensor(StoragePtr storage, const Shape& shape, ContiguousLayout&& layout, DType dtype)
      : storage_(std::move(storage)), shape_(shape), strides_(std::move(layout.strides)), numel_(layout.numel),
        dtype_(dtype) {}

  StoragePtr storage_;
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
  int64_t numel_ = 0;
  DType dtype_ = DType::f32;
  bool contiguous_ = true;
};

// ---- factories ----
/// Uninitialised contiguous tensor. ValueError for a negative size or a byte count past int64; Error (not
/// std::bad_alloc) naming the bytes and shape when the memory cannot be had.
Tensor empty(const Shape& shape, DType dtype = f32);
Tensor zeros(const Shape& shape, DType dtype = f32);
Tensor ones(const Shape& shape, DType dtype = f32);
Tensor full(const Shape& shape, double value, DType dtype = f32);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
/// start, start+step, ... < end (1-D); ValueError for step == 0 or an infinite range.
Tensor arange(double start, double end, double step = 1.0, DType dtype = f32);
/// n×n identity.
Tensor eye(int64_t n, DType dtype = f32);
/// A tensor of `shape` holding `values` in row-major order; ShapeError when the counts differ.
Tensor tensor(const std::vector<double>& values, const Shape& shape, DType dtype = f32);
/// A 1-D tensor holding `values`.
Tensor tensor(const std::vector<double>& values, DType dtype = f32);
/// An i64 tensor of `shape` (exact for every int64 value, unlike the double overload).
Tensor index_tensor(const std::vector<int64_t>& values, const Shape& shape);
/// A 0-d tensor.
Tensor scalar_tensor(double value, DType dtype = f32);

}  // namespace tg
