#pragma once
// SmallVector: a vector that keeps up to N elements inside itself and moves to one pool block beyond (LLVM's
// SmallVector). Autograd makes two lists per op, the node's input edges and the gradients its backward
// returns, nearly always of one to three entries: with std::vector each took a pool block, and the
// gradients, written `return {da, db}`, were copied once more out of the initializer list.
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include "core/pool.h"

namespace tg {

/// Up to N elements in place, more in a pool block. The part of std::vector's interface that autograd uses;
/// `{a, b}` builds each element straight from its argument (no initializer_list copy).
template <class T, size_t N>
class SmallVector {
 public:
  SmallVector() = default;  ///< empty
  /// `{a, b}`: each element built straight from its argument.
  template <class... U>
    requires(sizeof...(U) > 0 && (std::is_convertible_v<U&&, T> && ...))
  SmallVector(U&&... values) {
    reserve(sizeof...(U));
    (emplace_back(std::forward<U>(values)), ...);
  }
  /// @{
  /// Copies and moves, as std::vector's (a move leaves `other` empty).
  SmallVector(const SmallVector& other) {
    reserve(other.size_);
    for (const T& v : other) emplace_back(v);
  }
  SmallVector(SmallVector&& other) noexcept { take(other); }
  SmallVector& operator=(SmallVector other) noexcept {
    destroy(), take(other);
    return *this;
  }
  /// @}
  ~SmallVector() { destroy(); }

  /// @{
  /// std::vector's accessors and iterators (unchecked, as std::vector's operator[]).
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  /// @}

  /// Appends T(value), moving to a pool block past N elements.
  template <class U>
  void emplace_back(U&& value) {
    if (size_ == capacity_) reserve(2 * capacity_);
    new (data_ + size_) T(std::forward<U>(value));
    ++size_;
  }
  void push_back(T value) { emplace_back(std::move(value)); }  ///< emplace_back(value)
  void pop_back() { data_[--size_].~T(); }                      ///< destroys the last element
  /// Destroys the elements, keeping the capacity.
  void clear() {
    for (size_t i = 0; i < size_; ++i) data_[i].~T();
    size_ = 0;
  }
  /// Room for n elements without another allocation.
  void reserve(size_t n) {
    if (n <= capacity_) return;
    T* p = static_cast<T*>(pool_allocate(n * sizeof(T)));
    move_into(p);
    if (data_ != local()) pool_deallocate(data_, capacity_ * sizeof(T));
    data_ = p, capacity_ = n;
  }

 private:
  T* local() { return reinterpret_cast<T*>(local_); }
  void move_into(T* to) noexcept {  // moves the elements to `to`, destroying them here
    for (size_t i = 0; i < size_; ++i) new (to + i) T(std::move(data_[i])), data_[i].~T();
  }
  void take(SmallVector& other) noexcept {  // *this is empty and local; leaves `other` so
    if (other.data_ != other.local()) {
      data_ = other.data_, size_ = other.size_, capacity_ = other.capacity_;
    } else {
      other.move_into(data_);
      size_ = other.size_;
    }
    other.data_ = other.local(), other.size_ = 0, other.capacity_ = N;
  }
  void destroy() noexcept {  // leaves *this empty and local
    clear();
    if (data_ != local()) pool_deallocate(data_, capacity_ * sizeof(T));
    data_ = local(), capacity_ = N;
  }

  T* data_ = local();
  size_t size_ = 0;
  size_t capacity_ = N;
  alignas(T) unsigned char local_[N * sizeof(T)];
};

}  // namespace tg
