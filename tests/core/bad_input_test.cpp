// Bad input at core's edges: negative sizes and shapes whose sizes multiply past int64 in every factory
// and view, non-finite hyper-parameters, and damaged safetensors files. Each case pins the exception type
// and the words that name the problem. Cases found by the fuzz targets (tests/fuzz) carry their input.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "core/error.h"
#include "core/ops.h"
#include "core/random.h"
#include "core/safetensors.h"
#include "reference.h"

using namespace tg;
using doctest::Contains;

namespace {

constexpr int64_t kBig = int64_t(1) << 40;  // kBig * kBig overflows int64

// A safetensors file from a header (JSON text) and data bytes, with the 8-byte little-endian length.
std::string safetensors_bytes(const std::string& header, const std::string& data = "",
                              std::optional<uint64_t> length = std::nullopt) {
  uint64_t n = length.value_or(header.size());
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = char((n >> (8 * i)) & 0xff);
  return out + header + data;
}

}  // namespace

// ---------------------------------------------------------------------------------------- factory sizes

TEST_CASE("every factory refuses a negative size, naming itself and the size") {
  const Shape bad = {2, -3};
  CHECK_THROWS_WITH_AS(empty(bad), "empty: shape (2, -3): negative size -3", ValueError);
  CHECK_THROWS_WITH_AS(zeros(bad, i64), "zeros: shape (2, -3): negative size -3", ValueError);
  CHECK_THROWS_WITH_AS(ones(bad, f64), "ones: shape (2, -3): negative size -3", ValueError);
  CHECK_THROWS_WITH_AS(full(bad, 7.0, boolean), "full: shape (2, -3): negative size -3", ValueError);
  CHECK_THROWS_WITH_AS(randn(bad), "randn: shape (2, -3): negative size -3", ValueError);
  CHECK_THROWS_WITH_AS(rand(bad), "rand: shape (2, -3): negative size -3", ValueError);
  CHECK_THROWS_WITH_AS(randint(0, 5, bad), "randint: shape (2, -3): negative size -3", ValueError);
  CHECK_THROWS_WITH_AS(bernoulli(bad, 0.5), "bernoulli: shape (2, -3): negative size -3", ValueError);
  CHECK_THROWS_WITH_AS(bernoulli(bad, 1.0), "bernoulli: shape (2, -3): negative size -3", ValueError);
  CHECK_THROWS_WITH_AS(tensor({}, {-1}), "tensor: shape (-1,): negative size -1", ValueError);
  CHECK_THROWS_WITH_AS(index_tensor({}, {0, -1}), "index_tensor: shape (0, -1): negative size -1", ValueError);
  CHECK_THROWS_WITH_AS(eye(-2), "eye: shape (-2, -2): negative size -2", ValueError);
}

TEST_CASE("every factory refuses a shape whose element count overflows int64, naming itself") {
  for (const Shape& s : {Shape{kBig, kBig}, Shape{INT64_MAX, 2}, Shape{3, INT64_MAX / 2, 2}}) {
    CAPTURE(s);
    auto msg = [&](const char* op) { return fmt::format("{}: shape {}: number of elements overflows int64", op, s); };
    CHECK_THROWS_WITH_AS(empty(s), msg("empty").c_str(), ValueError);
    CHECK_THROWS_WITH_AS(zeros(s), msg("zeros").c_str(), ValueError);
    CHECK_THROWS_WITH_AS(ones(s, i64), msg("ones").c_str(), ValueError);
    CHECK_THROWS_WITH_AS(full(s, 1.0, f64), msg("full").c_str(), ValueError);
    CHECK_THROWS_WITH_AS(randn(s), msg("randn").c_str(), ValueError);
    CHECK_THROWS_WITH_AS(rand(s, f64), msg("rand").c_str(), ValueError);
    CHECK_THROWS_WITH_AS(randint(0, 2, s), msg("randint").c_str(), ValueError);
    CHECK_THROWS_WITH_AS(bernoulli(s, 0.5), msg("bernoulli").c_str(), ValueError);
    CHECK_THROWS_WITH_AS(tensor({1}, s), msg("tensor").c_str(), ValueError);
    CHECK_THROWS_WITH_AS(index_tensor({1}, s), msg("index_tensor").c_str(), ValueError);
  }
  CHECK_THROWS_WITH_AS(eye(int64_t(1) << 32), "eye: shape (4294967296, 4294967296): number of elements overflows int64",
                       ValueError);
}

TEST_CASE("a shape whose byte count overflows is refused before allocating") {
  CHECK_THROWS_WITH_AS(empty({int64_t(1) << 62}, f32), Contains("empty: shape (4611686018427387904,) is too large"),
                       ValueError);
  CHECK_THROWS_WITH_AS(randn({int64_t(1) << 61, 2}, f64), "randn: shape (2305843009213693952, 2) is too large", ValueError);
}

// With a size 0 there are no elements, but the other sizes still give the strides: their product must fit.
TEST_CASE("a zero-size shape whose other sizes multiply past int64 is refused") {
  CHECK_THROWS_WITH_AS(zeros({0, kBig, kBig}),
                       Contains("shape (0, 1099511627776, 1099511627776): number of elements "
                                "overflows int64"),
                       ValueError);
  CHECK_THROWS_WITH_AS(empty({kBig, 0, kBig}, i64), Contains("overflows int64"), ValueError);
  CHECK(zeros({0, kBig}).strides() == Strides{kBig, 1});  // fits: fine
}

// ------------------------------------------------------------------------------------ views, huge sizes

TEST_CASE("reshape and view with sizes that multiply past int64 are a ShapeError naming the op") {
  Tensor x = ones({2, 3});
  CHECK_THROWS_WITH_AS(x.reshape({INT64_MAX, 2}), Contains("reshape: shape (9223372036854775807, 2) is too large"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(x.view({kBig, kBig, -1}),
                       Contains("view: shape (1099511627776, 1099511627776, -1) is too large"), ShapeError);
  CHECK_THROWS_WITH_AS(x.reshape({-1, kBig, kBig}),
                       Contains("reshape: shape (-1, 1099511627776, 1099511627776) is too large"), ShapeError);
  Tensor z = zeros({0});
  CHECK_THROWS_WITH_AS(z.reshape({0, kBig, kBig}),
                       Contains("reshape: shape (0, 1099511627776, 1099511627776) is too large"), ShapeError);
  CHECK_THROWS_WITH_AS(z.view({kBig, kBig, 0}), Contains("view: shape (1099511627776, 1099511627776, 0) is too large"),
                       ShapeError);
  CHECK(z.reshape({0, kBig}).shape() == Shape{0, kBig});
}

TEST_CASE("expand to sizes that multiply past int64 is refused, and a huge expand that fits allocates nothing") {
  Tensor x = ones({1, 1});
  CHECK_THROWS_WITH_AS(x.expand({kBig, kBig}), Contains("overflows int64"), ValueError);
  CHECK_THROWS_WITH_AS(x.expand({4, INT64_MAX, 1}), Contains("overflows int64"), ValueError);
  CHECK_THROWS_WITH_AS(x.expand({-5, 1, 1}), Contains("expand: size -1 not allowed for new leading dim"), ShapeError);
  Tensor big = x.expand({kBig, 4});
  CHECK(big.numel() == 4 * kBig);
  CHECK(big.strides() == Strides{0, 0});
  CHECK(big.storage() == x.storage());
}

TEST_CASE("slice and narrow with extreme starts, ends, steps and lengths") {
  Tensor x = arange(0, 10, 1, i64);
  CHECK(x.slice(0, 0, 10, INT64_MAX).to_vector<int64_t>() == std::vector<int64_t>{0});
  CHECK(x.slice(0, 3, INT64_MAX, INT64_MAX - 1).to_vector<int64_t>() == std::vector<int64_t>{3});
  CHECK(x.slice(0, INT64_MIN, INT64_MAX, 4).to_vector<int64_t>() == std::vector<int64_t>{0, 4, 8});
  CHECK(x.slice(0, INT64_MAX, INT64_MIN).numel() == 0);
  CHECK_THROWS_WITH_AS(x.narrow(0, 5, INT64_MAX),
                       Contains("narrow: range [5, 9223372036854775812) out of bounds for dim 0"), IndexError);
  CHECK_THROWS_WITH_AS(x.narrow(0, INT64_MAX, 2), Contains("out of bounds for dim 0 of shape (10,)"), IndexError);
  CHECK_THROWS_WITH_AS(x.narrow(0, 2, -1), Contains("narrow: range [2, 1) out of bounds"), IndexError);
}

// ------------------------------------------------------------------ found by fuzz_tensor_views (tests/fuzz)
// Each case replays one crashing input: its bytes, then the calls they decode to. All were undefined
// behaviour (UBSan), caught before any check could see the bad value.

TEST_CASE("fuzz: a view of a zero-size tensor has no buffer, and reading it touches nothing") {
  // 02 09 0d 23 0b 01 08 0f 0a 09 03 09 0a 06 09 07 05 09 0a 00 02 08 09: data() computed nullptr + 2.
  Tensor v = zeros({0, 4}, i64).transpose(0, 1).select(0, -2);
  CHECK(v.shape() == Shape{0});
  CHECK(v.data<int64_t>() == nullptr);
  CHECK(sum(v).item() == 0);
  CHECK(v.contiguous().numel() == 0);
}

TEST_CASE("fuzz: an empty view's offset stays 0, however far a slice or select moved it") {
  // 03 0c 0b 0d 82 0a 07 03 f3 09 04 0a 03 0b 0c 0a 07 02 3b 00 01 00 01 00 0a 00 0f f6 2b 09 c6 f0 69 04 69 07
  // 04 0a 01 00 00 01 7e 0d 02 00 00 00 09: (3, 2, 4) sliced empty, viewed as (0, 2^63-1, 1), slice(1, -2, -5)
  // at offset 2^63-3, then sum: data() computed buffer + (2^63-3) elements, which wraps.
  Tensor x = zeros({3, 2, 4}, i64).slice(1, -2, -6, int64_t(1) << 62);
  Tensor v = x.view({-1, INT64_MAX, 1}).slice(1, -2, -5).squeeze();
  CHECK(v.shape() == Shape{0, 0});
  CHECK(v.offset() == 0);
  CHECK(sum(v).item() == 0);
  CHECK(v.contiguous().numel() == 0);
  CHECK(zeros({0, INT64_MAX}, i64).select(1, INT64_MAX - 1).offset() == 0);
  CHECK(arange(0, 6).slice(0, 6, 6).offset() == 0);
}

TEST_CASE("fuzz: the strides of a zero-size shape overflowed in contiguous_strides") {
  // 27 09 0d ff 35 43 53 01 09 01 00: empty((0, 4, 0x3543530109010000)), stride 4 * 0x35435301090100.
  CHECK_THROWS_WITH_AS(empty({0, 4, 3838002571360927744}, i64), Contains("overflows int64"), ValueError);
  // 0b 0b 0b 0b 09 f3 ...: empty((2, 2, 2, 0, 2^62)).
  CHECK_THROWS_WITH_AS(empty({2, 2, 2, 0, int64_t(1) << 62}, i64), Contains("overflows int64"), ValueError);
}

TEST_CASE("fuzz: view sizes that multiply past int64 overflowed before the size check") {
  // 01 0a 07 02 f3 08 ff 7f 04 2b 0a 0a f0 0a 0d: ones((1,)).expand((2^62, -1)), then view((1, 2^63-1, 1, 4)).
  Tensor x = ones({1}, i64).expand({int64_t(1) << 62, -1});
  CHECK_THROWS_WITH_AS(x.view({1, INT64_MAX, 1, 4}),
                       Contains("view: shape (1, 9223372036854775807, 1, 4) is too large"), ShapeError);
}

TEST_CASE("fuzz: slice with a huge step overflowed computing the size") {
  // 01 0a 07 02 f3 08 0a e1 04 0a ff ff ff ff ff ff ff ff ff 0a f0 0a 0d: slice(1, -1, 1, 2^63-1).
  Tensor x = ones({1}, i64).expand({int64_t(1) << 62, -1});
  Tensor s = x.slice(1, -1, 1, INT64_MAX);
  CHECK(s.shape() == Shape{int64_t(1) << 62, 1});
  CHECK(s.strides() == Strides{0, 1});  // a size-1 dim keeps its stride: step * stride is never computed
}

TEST_CASE("fuzz: narrow with a huge length overflowed in its bounds check") {
  // 01 8f 2f 09 0f f0 ...: ones((1,)).narrow(0, 6, 2^63-1).
  CHECK_THROWS_WITH_AS(ones({1}).narrow(0, 6, INT64_MAX),
                       Contains("narrow: range [6, 9223372036854775813) out of bounds"), IndexError);
}

// ------------------------------------------------------------------------ non-finite hyper-parameters

TEST_CASE("non-finite or out-of-range hyper-parameters are refused, naming the value") {
  CHECK_THROWS_WITH_AS(arange(NAN, 3), Contains("arange: start nan, end 3 and step 1 must be finite"), ValueError);
  CHECK_THROWS_WITH_AS(arange(0, 3, NAN), Contains("must be finite"), ValueError);
  CHECK_THROWS_WITH_AS(arange(0, 3, -INFINITY), Contains("must be finite"), ValueError);
  CHECK_THROWS_WITH_AS(arange(0, 1e30), Contains("arange: [0, 1e+30) in steps of 1 has too many elements"), ValueError);
  CHECK_THROWS_WITH_AS(arange(-1e308, 1e308, 1e-300), Contains("too many elements"), ValueError);
  CHECK_THROWS_WITH_AS(rand({2}, f32, nullptr, NAN, 1), Contains("rand: need finite low <= high, got [nan, 1)"),
                       ValueError);
  CHECK_THROWS_WITH_AS(rand({2}, f32, nullptr, -INFINITY, 0), Contains("got [-inf, 0)"), ValueError);
  CHECK_THROWS_WITH_AS(bernoulli({2}, INFINITY), Contains("bernoulli: probability must be in [0, 1], got inf"),
                       ValueError);
  CHECK_THROWS_WITH_AS(bernoulli({2}, -0.1), Contains("got -0.1"), ValueError);
  CHECK_THROWS_WITH_AS(normalize(ones({2, 3}), 1, INFINITY),
                       Contains("layer_norm: eps must be finite and >= 0, got inf"), ValueError);
  CHECK_THROWS_WITH_AS(clamp(ones({2}), NAN, 1.0), Contains("clamp: min nan and max 1 must not be NaN"), ValueError);
  CHECK_THROWS_WITH_AS(clamp(ones({2}), std::nullopt, NAN), Contains("must not be NaN"), ValueError);
}

// An i64 or bool element cannot hold NaN, inf or 1e30: converting those is undefined behaviour in C++.
TEST_CASE("a value an integer dtype cannot hold is refused, naming it") {
  CHECK_THROWS_WITH_AS(full({2}, NAN, i64), Contains("full: value nan does not fit dtype i64"), ValueError);
  CHECK_THROWS_WITH_AS(full({2}, 1e30, i64), Contains("value 1e+30 does not fit dtype i64"), ValueError);
  CHECK_THROWS_WITH_AS(scalar_tensor(-INFINITY, i64), Contains("value -inf does not fit dtype i64"), ValueError);
  CHECK(std::isnan((index_tensor({1, 2}, {2}) + NAN).to_vector<float>()[1]));  // promoted to f32, as in PyTorch
  CHECK_THROWS_WITH_AS(tensor({1, INFINITY}, {2}, i64), Contains("tensor: value inf does not fit dtype i64"),
                       ValueError);
  CHECK(full({1}, -9.2233720368547758e18, i64).item() == -9.2233720368547758e18);     // INT64_MIN is exact
  CHECK(full({2}, NAN, boolean).to_vector<bool>() == std::vector<bool>{true, true});  // bool(NaN) is true, as in C++
  CHECK(std::isnan(full({1}, NAN, f32).item()));
}

// ------------------------------------------------------------------------------- corrupt safetensors

TEST_CASE("safetensors: a header length that does not fit the file") {
  CHECK_THROWS_WITH_AS(parse_safetensors("abc", "f.st"),
                       Contains("safetensors f.st: 3 bytes is too short for the 8-byte "
                                "header length"),
                       ValueError);
  CHECK_THROWS_WITH_AS(parse_safetensors(safetensors_bytes("{}", "", 100), "f.st"),
                       Contains("header length 100 exceeds the file (10 bytes)"), ValueError);
  CHECK_THROWS_WITH_AS(parse_safetensors(safetensors_bytes("{}", "", UINT64_MAX - 1), "f.st"),  // no wrap-around
                       Contains("header length 18446744073709551614 exceeds the file"), ValueError);
  CHECK_THROWS_WITH_AS(parse_safetensors(safetensors_bytes("", ""), "f.st"), Contains("header is not valid JSON"),
                       ValueError);
}

TEST_CASE("safetensors: a header that is not JSON, or not an object of entries") {
  CHECK_THROWS_WITH_AS(parse_safetensors(safetensors_bytes("{\"a\": {"), "f.st"),
                       Contains("safetensors f.st: header is not valid JSON"), ValueError);
  CHECK_THROWS_WITH_AS(parse_safetensors(safetensors_bytes("[1, 2]"), "f.st"), Contains("header must be a JSON object"),
                       ValueError);
  CHECK_THROWS_WITH_AS(parse_safetensors(safetensors_bytes(R"({"w": 3})"), "f.st"),
                       Contains("tensor 'w': entry needs dtype, shape and data_offsets"), ValueError);
  CHECK_THROWS_WITH_AS(
      parse_safetensors(safetensors_bytes(R"({"w": {"dtype": "F32", "shape": [], "data_offsets": [0]}})"), "f.st"),
      Contains("tensor 'w': malformed dtype, shape or data_offsets"), ValueError);
  CHECK_THROWS_WITH_AS(parse_safetensors(safetensors_bytes(R"({"__metadata__": {"step": 3}})"), "f.st"),
                       Contains("metadata 'step' must be a string"), ValueError);
  CHECK_THROWS_WITH_AS(parse_safetensors(safetensors_bytes(R"({"__metadata__": [1]})"), "f.st"),
                       Contains("__metadata__ must be an object"), ValueError);
}

TEST_CASE("safetensors: an unknown dtype is named with the ones we read") {
  CHECK_THROWS_WITH_AS(
      parse_safetensors(safetensors_bytes(R"({"w": {"dtype": "F16", "shape": [1], "data_offsets": [0, 2]}})", "ab"),
                        "f.st"),
      Contains("safetensors f.st: tensor 'w' has unsupported dtype 'F16' (F32, F64, I64, BOOL)"), ValueError);
}

TEST_CASE("safetensors: bad shapes and offsets name the tensor and the numbers") {
  auto entry = [](const std::string& dtype, const std::string& shape, const std::string& offsets) {
    return R"({"w": {"dtype": ")" + dtype + R"(", "shape": )" + shape + R"(, "data_offsets": )" + offsets + "}}";
  };
  const std::string data(8, '\0');
  auto parse = [&](const std::string& header) { return parse_safetensors(safetensors_bytes(header, data), "f.st"); };
  CHECK_THROWS_WITH_AS(parse(entry("F32", "[2]", "[0, 16]")),
                       Contains("tensor 'w': data_offsets [0, 16] outside the 8 data bytes (truncated file?)"),
                       ValueError);
  CHECK_THROWS_WITH_AS(parse(entry("F32", "[0]", "[8, 4]")), Contains("data_offsets [8, 4] outside"), ValueError);
  CHECK_THROWS_WITH_AS(parse(entry("F32", "[3]", "[0, 8]")), Contains("tensor 'w': 8 bytes for shape (3,) of f32"),
                       ValueError);
  CHECK_THROWS_WITH_AS(parse(entry("F32", "[-1]", "[0, 8]")),
                       Contains("shape entries must be non-negative integers below 2^63"), ValueError);
  CHECK_THROWS_WITH_AS(parse(entry("F32", "[1.5]", "[0, 8]")),
                       Contains("shape entries must be non-negative integers below 2^63"), ValueError);
  CHECK_THROWS_WITH_AS(parse(entry("F32", "[2]", "[0, -8]")), Contains("offsets must be non-negative integers"),
                       ValueError);
  CHECK_THROWS_WITH_AS(parse(entry("F32", "[1099511627776, 1099511627776]", "[0, 8]")),
                       Contains("tensor 'w': shape (1099511627776, 1099511627776) overflows"), ValueError);
  CHECK_THROWS_WITH_AS(parse(entry("I64", "[18446744073709551615]", "[0, 8]")), Contains("integers below 2^63"),
                       ValueError);
  // 2^61 + 1 elements of 8 bytes is 2^64 + 8 bytes: wrapped to 64 bits that would be the 8 bytes present.
  CHECK_THROWS_WITH_AS(parse(entry("F64", "[2305843009213693953]", "[0, 8]")),
                       Contains("tensor 'w': 8 bytes for shape (2305843009213693953,) of f64"), ValueError);
  CHECK_THROWS_WITH_AS(parse_safetensors(safetensors_bytes(entry("BOOL", "[2]", "[0, 2]"), "\x01\x02"), "f.st"),
                       Contains("BOOL data holds a byte other than 0 or 1"), ValueError);
}

TEST_CASE("safetensors: overlapping tensors and truncated data") {
  const std::string two = R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                          R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})";
  CHECK_THROWS_WITH_AS(parse_safetensors(safetensors_bytes(two, std::string(12, '\0')), "f.st"),
                       Contains("safetensors f.st: tensors overlap at byte ranges [0, 8) and [4, 12)"), ValueError);
  const std::string one = R"({"a": {"dtype": "F64", "shape": [2, 2], "data_offsets": [0, 32]}})";
  CHECK_NOTHROW(parse_safetensors(safetensors_bytes(one, std::string(32, '\0'))));
  CHECK_THROWS_WITH_AS(parse_safetensors(safetensors_bytes(one, std::string(31, '\0')), "f.st"),
                       Contains("data_offsets [0, 32] outside the 31 data bytes (truncated file?)"), ValueError);
  CHECK_THROWS_WITH_AS(load_safetensors("/nonexistent/x.safetensors"),
                       Contains("load_safetensors: cannot open '/nonexistent/x.safetensors'"), ValueError);
  CHECK_THROWS_WITH_AS(load_safetensors("/"), "load_safetensors: '/' is a directory, expected a file", ValueError);
}
