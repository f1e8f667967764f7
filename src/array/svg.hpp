#pragma once
// What the pictures (picture.cpp, picture_slice.cpp) share to write SVG text.
#include <sstream>
#include <string>

namespace zarrpp::svg {

/// Text with XML's five special characters escaped.
inline std::string escaped(const std::string& s) {
  std::string out;
  for (const char c : s) {
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
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// A coordinate in pixels, to a tenth.
inline std::string px(double v) {
  std::ostringstream os;
  os.precision(1);
  os << std::fixed << v;
  return os.str();
}

/// A `<text>` element of class `cls` anchored at (x, y); `extra` adds attributes.
inline std::string text(const std::string& cls, double x, double y, const std::string& anchor, const std::string& s,
                        const std::string& extra = "") {
  return "<text class=\"" + cls + "\" x=\"" + px(x) + "\" y=\"" + px(y) + "\" text-anchor=\"" + anchor + "\"" + extra +
         ">" + escaped(s) + "</text>\n";
}

/// The opening tag of a standalone SVG document of this size (the pictures' font and class).
inline std::string open(const std::string& cls, double width, double height) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"" + cls + "\" width=\"" + px(width) + "\" height=\"" +
         px(height) + "\" viewBox=\"0 0 " + px(width) + " " + px(height) +
         "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
         "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
}

}  // namespace zarrpp::svg
