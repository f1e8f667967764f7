#pragma once
// Reading the XML documents S3 answers with, through libexpat.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace zarrpp::detail {

// Calls on_element(path, text) when each element closes; path holds the local names (namespace
// prefixes dropped) from the root to the element, text its character data (entities, character
// references and CDATA decoded by expat). Document type declarations are refused (no entity
// expansion at all). Throws ArgumentError (invalid_argument) describing malformed input.
void parse_xml(std::string_view xml,
               const std::function<void(const std::vector<std::string>& path, std::string& text)>& on_element);

}  // namespace zarrpp::detail
