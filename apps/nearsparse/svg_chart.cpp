#include "svg_chart.hpp"

#include <nearsparse/core/errors.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace nearsparse::app {

namespace {

constexpr double width = 720, panel_height = 260, left = 80, right = 170, top = 40, gap = 50;
const char* const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};

struct axis {
  double lo = 0, hi = 1;
  bool log = false;
  double map(double v, double a, double b) const {
    const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                         : (v - lo) / (hi - lo);
    return a + t * (b - a);
  }
};

axis make_axis(const std::vector<double>& values, bool log) {
  axis ax;
  ax.log = log;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values) {
    if (!std::isfinite(v) || (log && v <= 0)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) lo = log ? 1e-16 : 0, hi = 1;
  if (hi <= lo) hi = log ? lo * 10 : lo + 1;
  if (log) {
    ax.lo = std::pow(10.0, std::floor(std::log10(lo)));
    ax.hi = std::pow(10.0, std::ceil(std::log10(hi)));
  } else {
    const double pad = 0.05 * (hi - lo);
    ax.lo = lo - pad;
    ax.hi = hi + pad;
  }
  return ax;
}

std::string number(double v) {
  std::ostringstream s;
  s.precision(3);
  s << v;
  return s.str();
}

void ticks(std::ostream& out, const axis& ax, bool vertical, double a, double b, double at) {
  std::vector<double> values;
  if (ax.log) {
    for (double v = ax.lo; v <= ax.hi * 1.0001; v *= 10) values.push_back(v);
  } else {
    for (int i = 0; i <= 4; ++i) values.push_back(ax.lo + (ax.hi - ax.lo) * i / 4);
  }
  for (double v : values) {
    const double p = ax.map(v, a, b);
    if (vertical) {
      out << "<text x='" << at - 6 << "' y='" << p + 4 << "' text-anchor='end' font-size='11'>"
          << number(v) << "</text>\n";
    } else {
      out << "<text x='" << p << "' y='" << at + 16 << "' text-anchor='middle' font-size='11'>"
          << number(v) << "</text>\n";
    }
  }
}

}  // namespace

void write_svg_chart(const std::string& path, const std::string& title, const std::string& x_label,
                     bool log_x, const std::vector<chart_panel>& panels) {
  std::vector<double> xs;
  for (const auto& p : panels)
    for (const auto& s : p.series) xs.insert(xs.end(), s.x.begin(), s.x.end());
  const axis xa = make_axis(xs, log_x);
  const double height = top + panels.size() * (panel_height + gap) + 20;
  const double x0 = left, x1 = width - right;
  std::ostringstream out;
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
      << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n"
      << "<text x='" << width / 2 << "' y='24' text-anchor='middle' font-size='15'>" << title
      << "</text>\n";
  for (std::size_t k = 0; k < panels.size(); ++k) {
    const auto& panel = panels[k];
    const double y0 = top + k * (panel_height + gap) + panel_height, y1 = y0 - panel_height;
    std::vector<double> ys;
    for (const auto& s : panel.series) ys.insert(ys.end(), s.y.begin(), s.y.end());
    const axis ya = make_axis(ys, panel.log_y);
    out << "<rect x='" << x0 << "' y='" << y1 << "' width='" << x1 - x0 << "' height='"
        << panel_height << "' fill='none' stroke='black'/>\n";
    ticks(out, ya, true, y0, y1, x0);
    ticks(out, xa, false, x0, x1, y0);
    out << "<text transform='translate(" << 18 << "," << (y0 + y1) / 2
        << ") rotate(-90)' text-anchor='middle' font-size='12'>" << panel.y_label << "</text>\n";
    out << "<text x='" << (x0 + x1) / 2 << "' y='" << y0 + 34
        << "' text-anchor='middle' font-size='12'>" << x_label << "</text>\n";
    for (std::size_t s = 0; s < panel.series.size(); ++s) {
      const auto& series = panel.series[s];
      const char* colour = colours[s % 5];
      out << "<polyline fill='none' stroke='" << colour << "' stroke-width='1.8' points='";
      for (std::size_t i = 0; i < series.x.size() && i < series.y.size(); ++i) {
        const double x = series.x[i], y = series.y[i];
        if (!std::isfinite(x) || !std::isfinite(y) || (log_x && x <= 0) || (panel.log_y && y <= 0))
          continue;
        out << xa.map(x, x0, x1) << "," << ya.map(y, y0, y1) << " ";
      }
      out << "'/>\n<text x='" << x1 + 10 << "' y='" << y1 + 16 + 16 * s << "' font-size='12' fill='"
          << colour << "'>" << series.name << "</text>\n";
    }
  }
  out << "</svg>\n";
  std::ofstream file(path);
  file << out.str();
  if (!file) throw nearsparse::runtime_error("nearsparse: cannot write the chart '" + path + "'");
}

}  // namespace nearsparse::app
