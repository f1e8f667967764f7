#pragma once
// Text escaped for XML element content or an attribute value (S3 request bodies, the pictures' SVG).
#include <string>
#include <string_view>

namespace zarrpp::detail {

std::string xml_escape(std::string_view s);

}  // namespace zarrpp::detail
