// Dims, the small vector behind Shape and Strides: values stay in the object up to kInline and move to the
// heap beyond, and copies, moves, insert and erase keep the values on both sides of that boundary. Also
// contiguous_layout, a new tensor's strides and element count from one walk over its shape.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/shape.h"

using namespace tg;

namespace {

// Whether d's values live inside the object itself (no heap buffer).
bool is_inline(const Dims& d) {
  const char* p = reinterpret_cast<const char*>(d.data());
  const char* self = reinterpret_cast<const char*>(&d);
  return p >= self && p < self + sizeof d;
}

std::vector<int64_t> values(const Dims& d) { return std::vector<int64_t>(d.begin(), d.end()); }

// 1, 2, ..., n.
Dims iota(int64_t n) {
  Dims d;
  for (int64_t i = 1; i <= n; ++i) d.push_back(i);
  return d;
}

}  // namespace

TEST_CASE("Dims keeps up to kInline values in the object and more on the heap") {
  static_assert(Dims::kInline == 6);
  Dims d = iota(6);
  CHECK(is_inline(d));
  d.push_back(7);
  CHECK_FALSE(is_inline(d));
  CHECK(values(d) == std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7});
  for (int64_t i = 8; i <= 40; ++i) d.push_back(i);  // grows again past the first heap capacity
  CHECK(d.size() == 40);
  CHECK(d[39] == 40);
  CHECK(d.back() == 40);
}

TEST_CASE("Dims copies and moves keep the values, inline and on the heap") {
  for (int64_t n : {0, 3, 6, 7, 12}) {
    CAPTURE(n);
    const Dims src = iota(n);
    Dims copy = src;
    CHECK(copy == src);
    CHECK(is_inline(copy) == (n <= 6));
    Dims moved = std::move(copy);
    CHECK(moved == src);
    CHECK(copy.empty());  // like a moved-from std::vector
    Dims assigned = iota(9);
    assigned = src;
    CHECK(assigned == src);
    assigned = iota(2);
    CHECK(values(assigned) == std::vector<int64_t>{1, 2});
    assigned = std::move(moved);
    CHECK(assigned == src);
  }
}

TEST_CASE("Dims insert and erase shift the values, also across the inline boundary") {
  Dims d = iota(5);
  d.insert(d.begin(), 0);  // 6 values: still inline
  CHECK(is_inline(d));
  d.insert(d.begin() + 3, 99);  // the 7th goes to the heap
  CHECK(values(d) == std::vector<int64_t>{0, 1, 2, 99, 3, 4, 5});
  d.erase(d.begin() + 3);
  d.erase(d.end() - 1);
  CHECK(values(d) == std::vector<int64_t>{0, 1, 2, 3, 4});
  const Dims tail{7, 8, 9};
  d.insert(d.begin() + 1, tail.begin(), tail.end());
  CHECK(values(d) == std::vector<int64_t>{0, 7, 8, 9, 1, 2, 3, 4});
  d.insert(d.end(), {5, 6});
  CHECK(d.size() == 10);
  CHECK(d[9] == 6);
  d.clear();
  CHECK(d.empty());
}

TEST_CASE("Shape converts from std::vector and iterator ranges, and compares by value") {
  const std::vector<int64_t> v{2, 3, 4};
  const Shape s(v);
  CHECK(s == Shape{2, 3, 4});
  CHECK(Shape(s.rbegin(), s.rend()) == Shape{4, 3, 2});
  CHECK(Shape(s.begin() + 1, s.end()) == Shape{3, 4});
  CHECK(Shape(4, 1) == Shape{1, 1, 1, 1});
  CHECK_FALSE(s == Shape{2, 3});
  CHECK_FALSE(s == Shape{2, 3, 5});
  CHECK(fmt::format("{}", Shape(8, 2)) == "(2, 2, 2, 2, 2, 2, 2, 2)");
}

TEST_CASE("contiguous_layout gives contiguous_strides and numel, inline and on the heap") {
  for (const Shape& s : {Shape{}, Shape{3}, Shape{2, 3, 4}, Shape{2, 0, 3}, Shape{0}, Shape{1, 2, 3, 4, 5, 6, 7}}) {
    CAPTURE(s);
    const ContiguousLayout layout = contiguous_layout(s);
    CHECK(layout.strides == contiguous_strides(s));
    CHECK(layout.numel == s.numel());
  }
}

TEST_CASE("contiguous_layout throws numel's ValueError, in numel's order of checks") {
  const int64_t big = int64_t(1) << 40;  // big * big overflows int64
  // The last one has both faults: numel() meets the negative size first, a walk from the end the overflow.
  for (const Shape& s : {Shape{2, -3}, Shape{big, big}, Shape{big, 0, big}, Shape{-1, big, big}}) {
    CAPTURE(s);
    std::string expected;
    try {
      (void)s.numel();
    } catch (const ValueError& e) {
      expected = e.what();
    }
    REQUIRE_FALSE(expected.empty());
    CHECK_THROWS_WITH_AS(contiguous_layout(s), expected.c_str(), ValueError);
  }
}
