#include "s3_responses.hpp"

#include "xml.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp::detail {

S3Error parse_s3_error(std::string_view body) {
  S3Error e;
  if (body.empty()) return e;
  try {
    parse_xml(body, [&](const std::vector<std::string>& path, std::string& text) {
      if (path.size() == 2 && path[0] == "Error" && path[1] == "Code")
        e.code = std::move(text);
      else if (path.size() == 2 && path[0] == "Error" && path[1] == "Message")
        e.message = std::move(text);
    });
  } catch (const ArgumentError&) {
    return S3Error{};  // not XML: the status alone tells what happened
  }
  return e;
}

S3ListPage parse_s3_list_page(std::string_view body) {
  S3ListPage page;
  bool root_ok = false;
  parse_xml(body, [&](const std::vector<std::string>& path, std::string& text) {
    if (path[0] != "ListBucketResult") return;
    root_ok = true;
    if (path.size() == 3 && path[1] == "Contents" && path[2] == "Key")
      page.keys.push_back(std::move(text));
    else if (path.size() == 3 && path[1] == "CommonPrefixes" && path[2] == "Prefix")
      page.prefixes.push_back(std::move(text));
    else if (path.size() == 2 && path[1] == "IsTruncated")
      page.truncated = text == "true";
    else if (path.size() == 2 && path[1] == "NextContinuationToken")
      page.next = std::move(text);
  });
  if (!root_ok) throw ArgumentError("the response is not a ListBucketResult (is the endpoint an S3 server?)");
  return page;
}

S3ListPage parse_azure_list_page(std::string_view body) {
  S3ListPage page;
  bool root_ok = false;
  parse_xml(body, [&](const std::vector<std::string>& path, std::string& text) {
    if (path[0] != "EnumerationResults") return;
    root_ok = true;
    if (path.size() == 4 && path[1] == "Blobs" && path[2] == "Blob" && path[3] == "Name")
      page.keys.push_back(std::move(text));
    else if (path.size() == 4 && path[1] == "Blobs" && path[2] == "BlobPrefix" && path[3] == "Name")
      page.prefixes.push_back(std::move(text));
    else if (path.size() == 2 && path[1] == "NextMarker" && !text.empty())
      page.next = std::move(text);
  });
  if (!root_ok) throw ArgumentError("the response is not an EnumerationResults (is the endpoint Azure Blob Storage?)");
  page.truncated = page.next.has_value();
  return page;
}

std::vector<S3DeleteFailure> parse_s3_delete_result(std::string_view body) {
  std::vector<S3DeleteFailure> failures;
  S3DeleteFailure cur;
  // Children of <Error> close before it does: fill `cur`, then keep it.
  parse_xml(body, [&](const std::vector<std::string>& path, std::string& text) {
    if (path.size() == 3 && path[0] == "DeleteResult" && path[1] == "Error") {
      if (path[2] == "Key")
        cur.key = std::move(text);
      else if (path[2] == "Code")
        cur.code = std::move(text);
      else if (path[2] == "Message")
        cur.message = std::move(text);
    } else if (path.size() == 2 && path[0] == "DeleteResult" && path[1] == "Error") {
      failures.push_back(std::move(cur));
      cur = S3DeleteFailure{};
    }
  });
  return failures;
}

}  // namespace zarrpp::detail
