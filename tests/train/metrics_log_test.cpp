// Metrics logs: CSV and JSON Lines content, keeping a resumed run's earlier records, and write failures
// that name the file.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "train/metrics_log.h"

using namespace tg;
using namespace tg::train;

namespace {
std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("tg_train_" + name)).string();
}
}  // namespace

TEST_CASE("CsvLogger writes a header and rows; NaN is an empty cell") {
  const std::string path = temp_file("log.csv");
  {
    CsvLogger log(path);
    log.log({{"epoch", 1}, {"loss", 0.5}, {"val acc", NAN}});
    log.log({{"epoch", 2}, {"loss", 0.1}, {"val acc", 0.75}});
    CHECK(read(path) == "epoch,loss,val acc\n1,0.5,\n2,0.1,0.75\n");
    CHECK_THROWS_WITH_AS(log.log({{"epoch", 3}}), doctest::Contains(("CsvLogger " + path + ": the record's columns").c_str()),
                         ValueError);
  }
  CsvLogger resumed(path, 1);  // keeps the header and the first record
  resumed.log({{"epoch", 2}, {"loss", 0.2}, {"val acc", 0.5}});
  CHECK(read(path) == "epoch,loss,val acc\n1,0.5,\n2,0.2,0.5\n");
}

TEST_CASE("JsonlLogger writes one object per line; non-finite values are null") {
  const std::string path = temp_file("log.jsonl");
  {
    JsonlLogger log(path);
    log.log({{"epoch", 1}, {"loss", 0.125}, {"acc", INFINITY}});
    log.log({{"epoch", 2}, {"name\"q", 1e-20}});
  }
  CHECK(read(path) == "{\"epoch\": 1, \"loss\": 0.125, \"acc\": null}\n{\"epoch\": 2, \"name\\\"q\": 1e-20}\n");
  JsonlLogger resumed(path, 1);
  CHECK(read(path) == "{\"epoch\": 1, \"loss\": 0.125, \"acc\": null}\n");
  CHECK_THROWS_WITH_AS(JsonlLogger(path, 5), doctest::Contains("asked to keep 5 lines, the file has 1"), ValueError);
}

TEST_CASE("a failed write throws naming the file") {
  JsonlLogger full("/dev/full");
  CHECK_THROWS_WITH_AS(full.log({{"epoch", 1}}), doctest::Contains("JsonlLogger /dev/full: write failed"), Error);
  CHECK_THROWS_WITH_AS(CsvLogger("/nonexistent/dir/log.csv"),
                       doctest::Contains("CsvLogger /nonexistent/dir/log.csv: cannot open"), Error);
}
