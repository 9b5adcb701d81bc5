// SmallVector, the list behind a node's edges and a backward's Grads: elements in place up to N, in a pool
// block beyond, each made and destroyed once, whatever copies and moves the list goes through.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "autograd/small_vector.h"

using namespace tg;

namespace {

// Counts the live objects and the copies made, so that a test sees every element built and destroyed once.
struct Counted {
  static inline int live = 0, copies = 0;
  std::string value;
  Counted(const char* v) : value(v) { ++live; }  // implicit, as the conversions to Variable in Grads
  Counted(const Counted& o) : value(o.value) { ++live, ++copies; }
  Counted(Counted&& o) noexcept : value(std::move(o.value)) { ++live; }
  ~Counted() { --live; }
};

template <size_t N>
std::vector<std::string> values(const SmallVector<Counted, N>& v) {
  std::vector<std::string> out;
  for (const Counted& c : v) out.push_back(c.value);
  return out;
}

}  // namespace

TEST_CASE("SmallVector builds each element of {a, b} straight from its argument") {
  Counted::live = Counted::copies = 0;
  {
    Counted a("a");
    SmallVector<Counted, 2> v{a, "b"};  // a copied once, "b" made in place
    CHECK(values(v) == std::vector<std::string>{"a", "b"});
    CHECK(Counted::copies == 1);
    CHECK(Counted::live == 3);
  }
  CHECK(Counted::live == 0);
}

TEST_CASE("SmallVector keeps its values from in place to the heap, through copies and moves") {
  Counted::live = 0;
  {
    SmallVector<Counted, 2> v{"a", "b"};
    v.push_back("c");  // past N: to a pool block
    v.emplace_back("d");
    CHECK(values(v) == std::vector<std::string>{"a", "b", "c", "d"});
    SmallVector<Counted, 2> heap_copy = v;
    SmallVector<Counted, 2> heap_moved = std::move(v);
    CHECK(v.empty());
    CHECK(values(heap_copy) == values(heap_moved));

    SmallVector<Counted, 2> small{"x"};
    SmallVector<Counted, 2> small_copy = small;
    SmallVector<Counted, 2> small_moved = std::move(small);
    CHECK(small.empty());
    CHECK(values(small_copy) == std::vector<std::string>{"x"});
    CHECK(values(small_moved) == std::vector<std::string>{"x"});

    heap_moved = std::move(small_moved);  // assignment drops the old elements and the pool block
    CHECK(values(heap_moved) == std::vector<std::string>{"x"});
    heap_copy.pop_back();
    CHECK(heap_copy.back().value == "c");
    heap_copy.clear();
    CHECK(heap_copy.empty());
    CHECK(Counted::live == 2);  // small_copy's and heap_moved's "x"
  }
  CHECK(Counted::live == 0);
}
