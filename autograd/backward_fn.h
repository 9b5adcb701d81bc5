#pragma once
// BackwardFn: the closure an op records for its backward. Each differentiable op makes one, even when
// nothing is recorded (an op inside a backward, or under NoGradGuard), and a lambda that captures two
// Variables is 336 bytes: std::function put every closure above 16 bytes on the heap, a malloc and free
// per op. This one keeps closures of up to kInline bytes in place (nearly all ops) and larger ones on the
// heap, the small-buffer scheme of std::function with a buffer sized for our captures.
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include "autograd/small_vector.h"

namespace tg {

class Variable;
/// Gradients an op's backward returns, one per input (undefined = no gradient for that input), written
/// `return {dx}` or `return {da, db}`: up to three in place, each built straight from its expression.
using Grads = SmallVector<Variable, 3>;

/// Computes input gradients from the output gradient dy and the output y (y's value is present only
/// when the op asked to keep it). Written with differentiable functions, so create_graph can record it.
/// Holds any callable `Grads(const Variable& dy, const Variable& y)` (returning Grads itself); movable, not
/// copyable.
class BackwardFn {
 public:
  static constexpr size_t kInline = 384;  ///< bytes of closure kept in place: two Variables and a few scalars

  BackwardFn() = default;
  BackwardFn(std::nullptr_t) {}  ///< empty
  /// Holds `f`, in place when it fits in kInline bytes, else on the heap.
  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, BackwardFn> &&
             std::is_same_v<std::invoke_result_t<std::decay_t<F>&, const Variable&, const Variable&>, Grads>)
  BackwardFn(F&& f) {
    using C = std::decay_t<F>;
    if constexpr (sizeof(C) <= kInline && alignof(C) <= alignof(std::max_align_t)) {
      new (buffer_) C(std::forward<F>(f));
      ops_ = &kInlineOps<C>;
    } else {
      *reinterpret_cast<C**>(buffer_) = new C(std::forward<F>(f));
      ops_ = &kHeapOps<C>;
    }
    captures_ = !std::is_empty_v<C>;
  }
  BackwardFn(BackwardFn&& other) noexcept { take(other); }  ///< takes other's closure, leaving it empty
  /// Takes other's closure, leaving it empty.
  BackwardFn& operator=(BackwardFn&& other) noexcept {
    if (this != &other) reset(), take(other);
    return *this;
  }
  /// Drops the closure.
  BackwardFn& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  ~BackwardFn() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }  ///< whether it holds a closure
  /// False for a closure that captures nothing (add's `return {dy, dy}`): its backward reads no input's
  /// value, so an input written in place after the op was recorded does not change its gradients.
  bool captures() const { return captures_; }
  /// Runs the closure; it must hold one.
  Grads operator()(const Variable& dy, const Variable& y) const;

 private:
  // What the closure's type knows: how to call, move (into raw storage, destroying the source) and destroy it.
  // The calls' return types are deduced (the closure's Grads): Variable, and so Grads, is incomplete here.
  struct Ops {
    Grads (*call)(void* closure, const Variable& dy, const Variable& y);
    void (*move)(void* from, void* to) noexcept;
    void (*destroy)(void* closure) noexcept;
  };
  template <class C>
  static constexpr Ops kInlineOps = {
      [](void* c, const Variable& dy, const Variable& y) { return (*static_cast<C*>(c))(dy, y); },
      [](void* from, void* to) noexcept {
        new (to) C(std::move(*static_cast<C*>(from)));
        static_cast<C*>(from)->~C();
      },
      [](void* c) noexcept { static_cast<C*>(c)->~C(); }};
  template <class C>  // the buffer holds a C*
  static constexpr Ops kHeapOps = {
      [](void* c, const Variable& dy, const Variable& y) { return (**static_cast<C**>(c))(dy, y); },
      [](void* from, void* to) noexcept { *static_cast<C**>(to) = *static_cast<C**>(from); },
      [](void* c) noexcept { delete *static_cast<C**>(c); }};

  void take(BackwardFn& other) noexcept {  // *this is empty
    if (other.ops_) other.ops_->move(other.buffer_, buffer_), ops_ = other.ops_, other.ops_ = nullptr;
    captures_ = other.captures_;
  }
  void reset() noexcept {
    if (ops_) ops_->destroy(buffer_), ops_ = nullptr;
  }

  const Ops* ops_ = nullptr;
  bool captures_ = false;
  alignas(std::max_align_t) mutable unsigned char buffer_[kInline];
};

}  // namespace tg
