#pragma once
/// @file
/// Read-only access to a Zarr hierarchy served over HTTP(S) by any static file server (nginx,
/// Apache, a CDN, an object store's public endpoint).
///
/// The store is rooted at a URL: key "a/zarr.json" of the store "https://host/data/x.zarr" is read
/// from "https://host/data/x.zarr/a/zarr.json" (keys are percent-encoded, '/' kept). A query string
/// in the root URL ("...x.zarr?token=abc") is appended to every request. Byte ranges become HTTP
/// Range requests; servers that ignore Range and send the whole value are handled by slicing.
///
/// HTTP has no listing, so list_prefix and list_dir throw StoreError. Zarr v3 does not need them to
/// read: every node is found through its zarr.json and every chunk through its key. The store is
/// read-only: writes throw StoreError (read_only).
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zarrpp/store/store.hpp"
#include "zarrpp/version.hpp"

namespace zarrpp {

namespace detail {
class HttpClient;
class ReadLog;
struct HttpRequest;
struct HttpResponse;
}  // namespace detail

/// Network behaviour shared by HttpStore and S3Store. The defaults fail a request to a stalled or
/// dead server in about 30 s (stall_timeout per attempt, no new attempt after retry_window) while a
/// slow transfer that keeps moving bytes is never cut short (timeout: 5 minutes per attempt).
struct RemoteOptions {
  std::chrono::milliseconds connect_timeout{10'000};  ///< TCP (and TLS) connection set-up, per attempt
  std::chrono::milliseconds timeout{300'000};         ///< a whole request, per attempt; 0 = no limit
  std::chrono::milliseconds stall_timeout{10'000};    ///< abort when no byte moves for this long; 0 = never

  /// Attempts per request (1 = no retries). Retried: connection failures, resets and timeouts,
  /// HTTP 408, 429, 500, 502, 503 and 504.
  int max_attempts = 4;
  std::chrono::milliseconds retry_initial_delay{100};  ///< doubled after every failed attempt (with jitter)
  std::chrono::milliseconds retry_max_delay{5'000};    ///< cap on one delay, also on a server's Retry-After

  /// No new attempt starts once this long has passed since the first attempt (or since the last
  /// one that moved data: a response body began, or 64 KiB or more of a request body went out);
  /// 0 = only max_attempts bounds the retries.
  std::chrono::milliseconds retry_window{30'000};
  bool verify_tls = true;                 ///< check the server's certificate and host name (https)
  std::string ca_file{};                  ///< a CA bundle to verify with instead of the system's ("" = system)
  std::size_t max_idle_connections = 16;  ///< kept-alive connections per store beyond those in flight
                                          ///< (0 = a fresh connection for every request)

  /// Requests of one store on the wire at once, whatever the number of threads: reads of many
  /// chunks are started together and decoded as they arrive; more wait their turn. The default,
  /// 128, read 256 chunks of 64 KiB over a 50 ms link in 0.39 s (64: 0.50 s, 256: no faster;
  /// docs/benchmarks.md). zarr-python 2 with fsspec keeps up to 100 connections per host.
  std::size_t max_in_flight = 128;

  /// The largest response body read when the caller gives no smaller bound (chunks are bounded by
  /// their largest encoding, metadata by 256 MiB, ranges by their length).
  std::uint64_t max_response_bytes = std::uint64_t{5} << 30;
  std::string user_agent = std::string("zarrpp/") + kVersion;  ///< the User-Agent header

  /// The options set by name, as the CLI's flags and Python's storage_options give them:
  /// connect_timeout, timeout, stall_timeout, retry_window, retry_initial_delay and retry_max_delay
  /// in seconds (timeout, stall_timeout and retry_window may be 0: no limit), max_attempts a whole
  /// number >= 1, max_in_flight a whole number from 1 to 1024. Throws ArgumentError naming the option and what it
  /// takes.
  static const std::vector<std::string>& option_names();
  static bool is_option(std::string_view name);   ///< whether `name` is one of option_names()
  void set(std::string_view name, double value);  ///< sets the option `name` to `value`
};

/// A read-only store over HTTP(S): values are GET (ranges with Range requests), bounded by the
/// network options, retried when the server or network fails.
class HttpStore : public Store {
 public:
  /// How to reach the server: headers, redirects and the network bounds.
  struct Options {
    /// Extra request headers, e.g. {"Authorization", "Bearer ..."}.
    std::vector<std::pair<std::string, std::string>> headers{};
    bool follow_redirects = true;  ///< up to 5 redirects, http and https only
    RemoteOptions net{};           ///< timeouts, retries and limits of the requests
  };

  /// @{
  /// `url` must be http:// or https:// with a host; a trailing '/' is ignored. Throws StoreError
  /// naming the URL when it is not usable.
  static std::shared_ptr<HttpStore> open(const std::string& url);
  static std::shared_ptr<HttpStore> open(const std::string& url, Options options);
  /// @}
  /// Use open(); public for std::make_shared.
  HttpStore(const std::string& url, Options options);
  ~HttpStore() override;
  HttpStore(const HttpStore&) = delete;
  HttpStore& operator=(const HttpStore&) = delete;

  /// The root URL (without a trailing '/').
  const std::string& url() const { return root_; }
  /// The URL a key is read from (after validating the key).
  std::string url_of(const std::string& key) const;

  StoreCapabilities capabilities() const override {
    return {.writable = false,
            .listing = false,
            .conditional_writes = false,
            .locking = false,
            .native_streaming = false,
            .reads_in_flight = options_.net.max_in_flight};
  }
  std::string describe() const override;

 protected:
  /// nullopt on 404; any other failure (403, 5xx after retries, ...) throws StoreError. The
  /// version is the ETag when the server sends one.
  std::optional<VersionedBytes> do_get(const std::string& key, const ByteRange& range,
                                       std::uint64_t max_bytes) override;
  /// HEAD (a one-byte GET on servers without HEAD).
  std::optional<std::uint64_t> do_size(const std::string& key) override;
  /// A value that fails to decode: a HEAD says whether the GET's response was cut in transit.
  std::string do_explain_unreadable(const std::string& key) override;
  /// Read-only and without listing: capabilities() says so and Store refuses before these run.
  void do_set(const std::string& key, const Bytes& value) override;
  void do_erase(const std::string& key) override;
  std::vector<std::string> do_list_prefix(const std::string& prefix) override;
  /// The GET on the wire at once, with the store's other requests (up to net.max_in_flight).
  std::unique_ptr<PendingGet> do_start_get(const std::string& key, std::uint64_t max_bytes) override;

 private:
  std::vector<std::string> request_headers() const;
  detail::HttpRequest get_request(const std::string& key, const ByteRange& range, std::uint64_t max_bytes) const;
  /// What a GET's response means: the value, nullopt (404, a directory), or a StoreError.
  std::optional<VersionedBytes> read_response(const std::string& key, const ByteRange& range,
                                              const detail::HttpRequest& req, detail::HttpResponse&& resp);
  /// A HEAD request for `key` (falling back to a one-byte GET on servers without HEAD); returns
  /// the request as finally sent, for error messages. Throws StoreError on a failure status.
  struct HeadResult;
  HeadResult head(const std::string& key) const;

  std::string root_;   ///< scheme://host[:port]/path, no trailing '/', no query
  std::string query_;  ///< "" or "?..." appended to every request
  Options options_;
  std::unique_ptr<detail::HttpClient> client_;
  std::unique_ptr<detail::ReadLog> reads_;
};

}  // namespace zarrpp
