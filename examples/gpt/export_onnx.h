#pragma once
// `gpt export`: a model directory to an ONNX file (export_onnx.cpp).
#include <CLI/CLI.hpp>

#include <string>

namespace gpt {

struct ExportArgs {
  std::string model, out = "model.onnx", data, cases;
};

/// Adds the `export` subcommand to `app`; its options land in `args`.
CLI::App* add_export_command(CLI::App& app, ExportArgs& args);
/// Runs it: writes args.out and, with args.cases, windows of the validation split of args.data as check
/// cases. Throws tg::Error naming the problem (in a build without ONNX: that it has none).
int run_export(const ExportArgs& args);

}  // namespace gpt
