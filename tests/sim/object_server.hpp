#pragma once
// The simulated object store: objects with ETags, conditional PUT (If-Match, If-None-Match: *) and
// DELETE (If-Match), ranged GET, HEAD, listings with pagination that may lag behind writes —
// answered in S3's dialect (ListObjectsV2, DeleteObjects, 412) or Azure Blob Storage's (List
// Blobs with markers, 409 BlobAlreadyExists, x-ms-error-code), so S3Store's or AzureStore's own
// request, condition and lost-reply code is what runs against it. Capability variants: a server that ignores write
// conditions, and one that ignores conditions on DELETE only. Every change is reported to an
// observer (the model), under the server's lock, in the order it took effect.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "store/remote/transport.hpp"

namespace zarrpp::sim {

struct ServerOptions {
  bool conditional_put = true;     // honours If-Match / If-None-Match on PUT
  bool conditional_delete = true;  // honours If-Match on DELETE
  int list_page = 7;               // most keys per listing page (a small page: pagination runs)
  bool azure = false;              // Azure Blob Storage's dialect instead of S3's
};

// One change of one object: `data` nullopt when it was deleted. `op` is the operation the request
// was made for (0: none known). `seq` numbers the changes of the whole store from 1.
struct Change {
  std::uint64_t seq = 0;
  std::string key;
  std::optional<Bytes> before, after;
  std::uint64_t op = 0;
};

class ObjectServer {
 public:
  using Observer = std::function<void(const Change&)>;
  static constexpr const char* kBucket = "sim";

  explicit ObjectServer(ServerOptions options) : options_(options) {}
  void observe(Observer o) { observer_ = std::move(o); }

  // Answers one request as the server would, applying what it changes. `list_lag`: how many of
  // the latest key changes a listing does not see yet.
  detail::HttpResponse handle(const detail::HttpRequest& req, std::uint64_t op, int list_lag);
  // Gives an object a new ETag without changing its bytes (another tool rewrote the same bytes).
  bool touch(const std::string& key);
  // The changes so far (the store's sequence number of the latest change).
  std::uint64_t seq() const;
  std::size_t objects() const;

 private:
  struct Object {
    Bytes data;
    std::string etag;
  };
  detail::HttpResponse get(const std::string& key, const detail::HttpRequest& req, bool head);
  detail::HttpResponse put(const std::string& key, const detail::HttpRequest& req, std::uint64_t op);
  detail::HttpResponse erase(const std::string& key, const detail::HttpRequest& req, std::uint64_t op);
  detail::HttpResponse list(const std::map<std::string, std::string>& query, int lag) const;
  detail::HttpResponse error(long status, const std::string& s3_code, const std::string& azure_code) const;
  detail::HttpResponse delete_many(const detail::HttpRequest& req, std::uint64_t op);
  void change(const std::string& key, std::optional<Bytes> after, std::uint64_t op);
  std::string new_etag();

  ServerOptions options_;
  Observer observer_;
  mutable std::mutex mu_;
  std::map<std::string, Object> objects_;
  // The latest key creations and removals (seq, key, created), newest last: what a lagging
  // listing undoes.
  std::deque<std::tuple<std::uint64_t, std::string, bool>> key_changes_;
  std::uint64_t seq_ = 0, etags_ = 0;
};

// "NAME: value" headers: the value of `name` (case-insensitive), or nullopt.
std::optional<std::string> header_of(const detail::HttpRequest& req, std::string_view name);

}  // namespace zarrpp::sim
