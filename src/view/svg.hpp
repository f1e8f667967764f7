#pragma once
// What the pictures (picture.cpp, picture_slice.cpp) share to write SVG text.
#include <sstream>
#include <string>

#include "../core/xml_escape.hpp"

namespace zarrpp::svg {

/// Text as XML content or an attribute value: the special characters escaped (core's
/// xml_escape), and control characters, which XML 1.0 cannot hold at all, shown as '?'.
inline std::string escaped(const std::string& s) {
  std::string clean = s;
  for (char& c : clean)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') c = '?';
  return detail::xml_escape(clean);
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
