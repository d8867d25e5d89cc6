#pragma once
// A small SVG line chart writer for results a person would rather see than read (error and
// speedup against tau, a density of states): stacked panels sharing one x axis, each with its
// own y axis, linear or logarithmic. No dependencies.

#include <string>
#include <vector>

namespace nearsparse::app {

struct chart_series {
  std::string name;
  std::vector<double> x, y;
};

struct chart_panel {
  std::string y_label;
  bool log_y = false;
  std::vector<chart_series> series;
};

/// Writes the chart to `path`; throws nearsparse::runtime_error when the file cannot be written.
void write_svg_chart(const std::string& path, const std::string& title, const std::string& x_label,
                     bool log_x, const std::vector<chart_panel>& panels);

}  // namespace nearsparse::app
