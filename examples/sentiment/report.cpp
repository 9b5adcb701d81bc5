// Metrics, and the SVG pictures: the learning curve through tg::train's, the attention
// heatmaps hand-written (rectangles and text).
#include "report.h"

#include <algorithm>
#include <cmath>

namespace sentiment {

Metrics compute_metrics(const std::vector<int64_t>& predicted, const std::vector<int64_t>& truth, int64_t C) {
  tg::check<tg::ValueError>(!truth.empty() && predicted.size() == truth.size(),
                            "metrics: {} predictions for {} labels", predicted.size(), truth.size());
  Metrics m;
  m.confusion.assign(size_t(C), std::vector<int64_t>(size_t(C), 0));
  int64_t correct = 0;
  for (size_t i = 0; i < truth.size(); ++i) {
    tg::check<tg::ValueError>(truth[i] >= 0 && truth[i] < C && predicted[i] >= 0 && predicted[i] < C,
                              "metrics: label {} / prediction {} outside [0, {})", truth[i], predicted[i], C);
    ++m.confusion[size_t(truth[i])][size_t(predicted[i])];
    correct += truth[i] == predicted[i];
  }
  m.accuracy = double(correct) / double(truth.size());
  for (int64_t c = 0; c < C; ++c) {
    int64_t tp = m.confusion[size_t(c)][size_t(c)], pred = 0, real = 0;
    for (int64_t k = 0; k < C; ++k) pred += m.confusion[size_t(k)][size_t(c)], real += m.confusion[size_t(c)][size_t(k)];
    double p = pred ? double(tp) / double(pred) : 0, r = real ? double(tp) / double(real) : 0;
    m.precision += p / double(C), m.recall += r / double(C), m.f1 += (p + r > 0 ? 2 * p * r / (p + r) : 0) / double(C);
  }
  return m;
}

std::string format_metrics(const Metrics& m, const std::vector<std::string>& names) {
  std::string out = fmt::format("accuracy {:.4f}   precision {:.4f}   recall {:.4f}   F1 {:.4f}  (macro)\n",
                                m.accuracy, m.precision, m.recall, m.f1);
  out += fmt::format("confusion matrix (rows: truth, columns: predicted)\n{:>10}", "");
  for (const std::string& n : names) out += fmt::format("{:>10}", n);
  for (size_t r = 0; r < m.confusion.size(); ++r) {
    out += fmt::format("\n{:>10}", names[r]);
    for (int64_t v : m.confusion[r]) out += fmt::format("{:>10}", v);
  }
  return out + "\n";
}

std::string learning_curve_svg(const std::vector<EpochLog>& log, const std::string& title) {
  std::vector<double> epoch, loss, train_acc, val_acc;
  double max_loss = 0;
  for (const EpochLog& e : log) {
    epoch.push_back(double(e.epoch)), loss.push_back(e.train_loss);
    train_acc.push_back(e.train_accuracy), val_acc.push_back(e.val_accuracy);
    max_loss = std::max(max_loss, e.train_loss);
  }
  return tg::train::learning_curve_svg(
      {{"training loss", loss}, {"training accuracy", train_acc, true}, {"validation accuracy", val_acc, true}},
      {.title = title, .x = epoch, .left_range = std::pair{0.0, std::max(max_loss, 1e-12)},
       .right_range = std::pair{0.5, 1.0}});
}

std::vector<std::vector<double>> attention_entropy(const std::vector<tg::Tensor>& weights) {
  std::vector<std::vector<double>> out;
  for (const tg::Tensor& t : weights) {
    tg::check<tg::ValueError>(t.dim() == 3 && t.size(1) == t.size(2) && t.shape() == weights[0].shape(),
                              "attention_entropy: weights must all be (H, S, S) of one shape, got {} and {}",
                              weights[0].shape(), t.shape());
    const int64_t H = t.size(0), S = t.size(1);
    const std::vector<double> w = t.to_vector<double>();
    std::vector<double>& row = out.emplace_back(size_t(H), 0.0);
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t i = 0; i < S; ++i)
        for (int64_t j = 0; j < S; ++j)
          if (double v = w[size_t((h * S + i) * S + j)]; v > 0) row[size_t(h)] -= v * std::log(v);
      row[size_t(h)] /= double(S) * std::log(double(S));  // 0 / 0 = NaN for one key
    }
  }
  return out;
}

namespace {

// A weight in [0, 1] as its cell's colour: white to blue.
std::string shade(double v) {
  const int c = int(255 - 215 * std::clamp(v, 0.0, 1.0));
  return fmt::format("rgb({},{},255)", c, c);
}

// The colour scale under the title: a bar from weight 0 to 1 with ticks.
std::string colour_scale(double x, double y) {
  const double w = 200;
  std::string s = "<defs><linearGradient id='scale'>";
  for (double v : {0.0, 1.0}) s += fmt::format("<stop offset='{}' stop-color='{}'/>", v, shade(v));
  s += fmt::format("</linearGradient></defs><rect x='{}' y='{}' width='{}' height='10' fill='url(#scale)' "
                   "stroke='#888'/>", x, y, w);
  for (double v : {0.0, 0.25, 0.5, 0.75, 1.0})
    s += fmt::format("<text x='{:.1f}' y='{}' text-anchor='middle'>{}</text>", x + w * v, y + 22, v);
  return s + fmt::format("<text x='{}' y='{}'>attention weight of a key for a query (each row sums to 1)</text>\n",
                         x + w + 14, y + 9);
}

}  // namespace

std::string attention_svg(const std::vector<std::string>& tokens, const std::vector<tg::Tensor>& weights,
                          const std::string& title, int64_t networks) {
  const std::vector<std::vector<double>> entropy = attention_entropy(weights);
  const int64_t S = int64_t(tokens.size()), L = int64_t(weights.size()), H = L ? weights[0].size(0) : 0;
  const int64_t per_network = networks > 1 ? L / networks : L;
  const double cell = 18, label = 90, gap = 40, top = 90, panel = label + cell * double(S) + gap;
  const double width = std::max(20 + panel * double(H), 600.0), height = top + (panel + 20) * double(L);
  std::string s = fmt::format("<svg xmlns='http://www.w3.org/2000/svg' width='{:.0f}' height='{:.0f}' "
                              "font-family='sans-serif' font-size='11'>\n<rect width='100%' height='100%' fill='white'/>\n"
                              "<text x='20' y='24' font-size='15'>{}</text>\n",
                              width, height, tg::train::xml_escape(title));
  s += colour_scale(20, 40);
  for (int64_t l = 0; l < L; ++l) {  // one row of panels per layer, one panel per head
    std::vector<double> w = weights[size_t(l)].to_vector<double>();  // (H, S, S)
    for (int64_t h = 0; h < H; ++h) {
      const double ox = 20 + panel * double(h) + label, oy = top + (panel + 20) * double(l) + label;
      const std::string network = networks > 1 ? fmt::format("network {} ", l / per_network) : "";
      const double e = entropy[size_t(l)][size_t(h)];
      s += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='13'>{}layer {} head {}, entropy {}</text>\n", ox,
                       oy - label + 14, network, l % per_network, h, std::isnan(e) ? "-" : fmt::format("{:.2f}", e));
      // The axes' names: queries down the left (one row each), keys along the bottom (one column each).
      s += fmt::format("<text transform='translate({:.1f},{:.1f}) rotate(-90)' text-anchor='middle' "
                       "font-style='italic'>query</text>",
                       ox - label - 4, oy + cell * double(S) / 2);
      s += fmt::format("<text x='{:.1f}' y='{:.1f}' text-anchor='middle' font-style='italic'>key</text>\n",
                       ox + cell * double(S) / 2, oy + cell * double(S) + 14);
      for (int64_t i = 0; i < S; ++i) {
        s += fmt::format("<text x='{:.1f}' y='{:.1f}' text-anchor='end'>{}</text>", ox - 4, oy + cell * double(i) + 13,
                         tg::train::xml_escape(tokens[size_t(i)]));
        s += fmt::format("<text transform='translate({:.1f},{:.1f}) rotate(-60)'>{}</text>", ox + cell * double(i) + 12,
                         oy - 4, tg::train::xml_escape(tokens[size_t(i)]));
        for (int64_t j = 0; j < S; ++j) {
          double v = w[size_t((h * S + i) * S + j)];
          s += fmt::format("<rect x='{:.1f}' y='{:.1f}' width='{}' height='{}' fill='{}'><title>{} -> {}: "
                           "{:.3f}</title></rect>",
                           ox + cell * double(j), oy + cell * double(i), cell, cell, shade(v),
                           tg::train::xml_escape(tokens[size_t(i)]), tg::train::xml_escape(tokens[size_t(j)]), v);
        }
      }
      s += "\n";
    }
  }
  return s + "</svg>\n";
}

}  // namespace sentiment
