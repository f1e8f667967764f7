#pragma once
/// @file
/// Opening a store from a URL.
///
///   "s3://bucket"                  S3Store on the whole bucket
///   "s3://bucket/path/in/bucket"   S3Store rooted at that prefix (endpoint, region and credentials
///                                  from OpenStoreOptions::s3, else the AWS_* environment variables)
///   "http://host:port/path"        HttpStore (read-only) rooted at the URL
///   "https://host/path?query"      HttpStore; the query is sent with every request
///   "file:///abs/path"             FileStore on that directory ("file://localhost/..." too;
///                                  percent-escapes are decoded)
///   "/abs/path", "rel/path"        FileStore on that directory
///
/// The URL always names the store root, which is the node itself: Array::open(open_store(url))
/// opens the array the URL points at. Anything else, e.g. "gs://..." or "s3://" without a bucket,
/// throws StoreError naming the URL.
#include <string>

#include "zarrpp/store/file_store.hpp"
#include "zarrpp/store/http_store.hpp"
#include "zarrpp/store/s3_store.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp {

/// What open_store needs besides the URL: credentials, endpoint, headers and network bounds.
struct OpenStoreOptions {
  FileStore::Options file{};  ///< file:// and plain paths (by default a missing directory is made by the first write)
  HttpStore::Options http{};  ///< http:// and https://
  S3Store::Options s3{};      ///< s3:// (bucket and prefix come from the URL)
};

/// @{
/// The store a URL names (see the top of this file); `options` for credentials, headers and the
/// network bounds.
StorePtr open_store(const std::string& url);
StorePtr open_store(const std::string& url, const OpenStoreOptions& options);
/// @}

}  // namespace zarrpp
