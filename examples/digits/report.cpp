// Evaluation and pictures, shared by `train` (after the last epoch) and `eval`.
#include "report.h"

#include <filesystem>

#include "draw.h"

namespace digits {

Evaluation evaluate(DigitsNet& model, const Images& images) {
  tg::check<tg::ValueError>(images.labels.defined(), "evaluate: the images have no labels");
  Evaluation e;
  e.proba = predict_proba(model, images.pixels);
  e.predicted = tg::argmax(e.proba, 1).to_vector<int64_t>();
  e.truth = images.labels.to_vector<int64_t>();
  e.confusion.assign(kClasses, std::vector<int64_t>(kClasses, 0));
  int64_t right = 0;
  for (size_t i = 0; i < e.truth.size(); ++i)
    ++e.confusion[size_t(e.truth[i])][size_t(e.predicted[i])], right += e.truth[i] == e.predicted[i];
  e.accuracy = double(right) / double(e.truth.size());
  return e;
}

std::string format_evaluation(const Evaluation& e) {
  int64_t right = 0;
  for (int64_t d = 0; d < kClasses; ++d) right += e.confusion[size_t(d)][size_t(d)];
  std::string out = fmt::format("accuracy {:.4f} ({} of {})\nconfusion matrix (rows: true digit, columns: predicted)\n"
                                "     ", e.accuracy, right, e.truth.size());
  for (int64_t d = 0; d < kClasses; ++d) out += fmt::format("{:>4}", d);
  for (int64_t t = 0; t < kClasses; ++t) {
    out += fmt::format("\n  {:>2} ", t);
    for (int64_t p = 0; p < kClasses; ++p) out += fmt::format("{:>4}", e.confusion[size_t(t)][size_t(p)]);
  }
  return out + "\n";
}

std::vector<std::string> write_pictures(const DigitsNet& model, const Images& images, const Evaluation& e,
                                        const std::string& dir, const std::string& name) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  tg::check<tg::Error>(!ec && std::filesystem::is_directory(dir), "digits: cannot create the directory '{}': {}", dir,
                       ec ? ec.message() : "a file of that name exists");
  const std::string filters = (std::filesystem::path(dir) / "filters.svg").string();
  const std::string wrong = (std::filesystem::path(dir) / "misclassified.svg").string();
  const tg::Tensor weight = model.conv1().weight().value();
  const std::string a = filters_svg(weight, fmt::format("digits ({}): the {} filters of the first layer (3×3)", name,
                                                        weight.size(0)));
  tg::write_file_atomic(filters, {a}, "digits: cannot write");
  std::vector<int64_t> rows;
  std::vector<std::string> captions;
  const std::vector<double> p = e.proba.to_vector<double>();
  for (size_t i = 0; i < e.truth.size(); ++i)
    if (e.predicted[i] != e.truth[i]) {
      rows.push_back(int64_t(i));
      const double confidence = p[i * kClasses + size_t(e.predicted[i])];
      captions.push_back(fmt::format("{} → {} ({:.2f})", e.truth[i], e.predicted[i], confidence));
    }
  const tg::Tensor index = tg::index_tensor(rows, {int64_t(rows.size())});
  const tg::Tensor shown = rows.empty() ? tg::zeros({0, 1, kSide, kSide}) : tg::index_select(images.pixels, 0, index);
  const std::string b = images_svg(shown, captions, fmt::format("digits ({}): {} of {} misclassified, true → predicted "
                                                                "(probability)", name, rows.size(), e.truth.size()));
  tg::write_file_atomic(wrong, {b}, "digits: cannot write");
  return {filters, wrong};
}

}  // namespace digits
