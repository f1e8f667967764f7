#pragma once
// The XML bodies S3 (and Azure Blob Storage) answer with, parsed into plain structs (through libexpat). Pure functions
// of the body text, so they can be tested and fuzzed without a server.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zarrpp::detail {

// <Error><Code>..</Code><Message>..</Message></Error>; empty fields when the body is not such a
// document (a proxy's HTML page, nothing at all).
struct S3Error {
  std::string code, message;
};
S3Error parse_s3_error(std::string_view body);

// One page of ListObjectsV2.
struct S3ListPage {
  std::vector<std::string> keys;      // <Contents><Key>
  std::vector<std::string> prefixes;  // <CommonPrefixes><Prefix>
  bool truncated = false;             // <IsTruncated>true
  std::optional<std::string> next;    // <NextContinuationToken>
};
// Throws ArgumentError when the body is malformed XML or not a ListBucketResult.
S3ListPage parse_s3_list_page(std::string_view body);

// One page of Azure's List Blobs (EnumerationResults): <Blobs><Blob><Name>, <Blobs><BlobPrefix><Name>,
// <NextMarker> (empty or absent on the last page). Throws ArgumentError when the body is malformed
// XML or not an EnumerationResults. (Azure's <Error> bodies read with parse_s3_error.)
S3ListPage parse_azure_list_page(std::string_view body);

// The keys DeleteObjects could not delete: <DeleteResult><Error><Key/><Code/><Message/></Error>.
struct S3DeleteFailure {
  std::string key, code, message;
};
// Throws ArgumentError when the body is malformed XML.
std::vector<S3DeleteFailure> parse_s3_delete_result(std::string_view body);

}  // namespace zarrpp::detail
