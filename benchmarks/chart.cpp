#include "sluice/benchmarks/chart.hpp"

#include <algorithm>
#include <cstdio>

namespace sluice {
namespace {

constexpr int kWidth = 900;
constexpr int kLabelWidth = 360;
constexpr int kBarHeight = 18;
constexpr int kGap = 6;

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string bench_chart_svg(const nlohmann::json& results) {
  std::string body;
  int y = 40;
  char buf[512];
  for (const auto& bench : results.at("benchmarks")) {
    const auto scenarios = bench.value("scenarios", nlohmann::json::array());
    if (scenarios.empty() || scenarios.at(0).at("ratio_to").empty()) continue;
    const std::string baseline = scenarios.at(0).at("ratio_to").begin().key();
    // Each group on its own scale: ratios differ by orders of magnitude between groups.
    double largest = 1;
    for (const auto& s : scenarios)
      largest = std::max(largest, s.at("ratio_to").at(baseline).get<double>());
    const double scale = (kWidth - kLabelWidth - 80) / largest;
    std::snprintf(buf, sizeof(buf),
                  "<text x=\"10\" y=\"%d\" font-weight=\"bold\">%s</text><text x=\"%d\" y=\"%d\" "
                  "fill=\"#555\">× %s</text>\n",
                  y, escaped(bench.at("name").get<std::string>()).c_str(), kLabelWidth, y,
                  escaped(baseline).c_str());
    body += buf;
    y += kGap + 4;
    for (const auto& s : scenarios) {
      const double ratio = s.at("ratio_to").at(baseline).get<double>();
      const bool is_baseline = s.at("baseline").get<bool>();
      std::snprintf(
          buf, sizeof(buf),
          "<text x=\"20\" y=\"%d\">%s</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
          "fill=\"%s\"/><text x=\"%.1f\" y=\"%d\">%.2f×</text>\n",
          y + kBarHeight - 4, escaped(s.at("name").get<std::string>()).c_str(), kLabelWidth, y,
          std::max(1.0, ratio * scale), kBarHeight, is_baseline ? "#9e9e9e" : "#1f77b4",
          kLabelWidth + std::max(1.0, ratio * scale) + 6, y + kBarHeight - 4, ratio);
      body += buf;
      y += kBarHeight + kGap;
    }
    y += 2 * kGap;
  }
  std::snprintf(
      buf, sizeof(buf),
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "font-family=\"sans-serif\" "
      "font-size=\"13\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"10\" "
      "y=\"20\" font-size=\"15\">sluice bench: median throughput, as a multiple of each group's "
      "baseline (%s)</text>\n",
      kWidth, y, escaped(results.value("machine", "")).substr(0, 60).c_str());
  return buf + body + "</svg>\n";
}

}  // namespace sluice
