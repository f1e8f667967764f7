// S3 response bodies (XML through expat): error documents, ListObjectsV2 pages and DeleteObjects
// results. Any bytes give a result or a zarrpp::Error, never a crash or an unbounded allocation.
#include <cstdint>
#include <string_view>

#include "store/remote/s3_responses.hpp"
#include "zarrpp/zarrpp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  try {
    const auto e = zarrpp::detail::parse_s3_error(body);
    if (e.code.size() > size || e.message.size() > size) __builtin_trap();
  } catch (const zarrpp::Error&) {
  }
  try {
    const auto page = zarrpp::detail::parse_s3_list_page(body);
    std::size_t total = 0;
    for (const auto& k : page.keys) total += k.size();
    if (total > size) __builtin_trap();  // text comes from the body (entities expand by at most 1:1 here)
  } catch (const zarrpp::Error&) {
  }
  try {
    (void)zarrpp::detail::parse_s3_delete_result(body);
  } catch (const zarrpp::Error&) {
  }
  return 0;
}
