#pragma once
/// @file
/// Amazon S3 and S3-compatible object storage (MinIO, Ceph, R2, moto, ...), signed with AWS
/// Signature Version 4, addressed path-style: ENDPOINT/bucket/key.
///
/// The store is rooted at `bucket` + `prefix`: key "a/zarr.json" of the store with prefix "data/x"
/// is the object "data/x/a/zarr.json". Objects under the root whose names are not valid store keys
/// (e.g. "folder/" markers) are left out of listings.
///
/// Settings not given in Options come from the environment, like the AWS tools:
///   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (sent as x-amz-security-token;
///   taken from the environment only together with the access key),
///   AWS_REGION or AWS_DEFAULT_REGION (else "us-east-1"),
///   AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (else https://s3.REGION.amazonaws.com).
/// Without credentials requests go unsigned (public buckets).
///
/// Conditional sets and compare_and_set use conditional PUTs (If-None-Match: * to create, If-Match: ETag to
/// replace); versions are ETags.
///
/// lock() is a lease built from the same conditional PUTs, so growth (prepend, append, resize) works
/// between processes and machines: the lock is an object next to the key (".zarrpp-lock.NAME",
/// invisible to listings) created with If-None-Match: *. Its holder rewrites it (If-Match on its
/// own ETag) every lock_ttl / 4 from a background thread; a waiter that sees the same ETag for
/// longer than lock_ttl by its own clock (no clocks are compared between machines) takes the lease
/// over with If-Match on that ETag, so a crashed holder delays others by lock_ttl at most. A holder
/// that could not renew in time has lost the lease: StoreLock::check() then throws and the array
/// layer stops before it changes zarr.json. On a server without conditional writes, conditional sets
/// and lock() throw ConflictError, so growth refuses clearly.
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "zarrpp/store/http_store.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp {

namespace detail {
struct ConditionalSupport;
class ConditionalProbe;
}  // namespace detail

/// Whether the server honours If-None-Match / If-Match on PUT.
enum class ConditionalWrites {
  Auto,  ///< find out: PUT a probe object twice with If-None-Match: * (and once with a wrong
         ///< If-Match); a server that does not answer 412 in three probes in a row does not support
         ///< them (asked again after 5 minutes; support, once seen, is kept)
  On,    ///< assume it does
  Off,   ///< assume it does not: conditional sets and compare_and_set throw ConflictError
};

/// A store in an S3 bucket (AWS or any S3-compatible server): conditional writes with If-Match /
/// If-None-Match, bounded and retried requests.
class S3Store : public Store {
 public:
  /// The bucket, prefix, endpoint, region and credentials (the AWS_* environment fills in what is
  /// not given), and the network bounds.
  struct Options {
    std::string bucket{};  ///< required
    std::string prefix{};  ///< the store root inside the bucket ("" = whole bucket)

    /// "http://127.0.0.1:9000", "https://s3.eu-west-1.amazonaws.com"; unset = environment, else AWS
    std::optional<std::string> endpoint = std::nullopt;
    std::optional<std::string> region = std::nullopt;         ///< e.g. "eu-west-1"; unset = environment, else us-east-1
    std::optional<std::string> access_key_id = std::nullopt;  ///< unset = AWS_ACCESS_KEY_ID, the credentials files, ...
    std::optional<std::string> secret_access_key = std::nullopt;  ///< unset = as the key id
    std::optional<std::string> session_token = std::nullopt;      ///< "" = none, even if AWS_SESSION_TOKEN is set
    bool anonymous = false;                                       ///< never sign, even when credentials are found
    bool read_only = false;  ///< refuse every write (StoreError read_only); nothing is asked of the server
    ConditionalWrites conditional_writes =
        ConditionalWrites::Auto;  ///< whether the server honours If-Match / If-None-Match
    /// With conditional_writes Off: why, in the refusals of conditional writes and locks ("" = the
    /// setting itself is named).
    std::string conditional_writes_off_reason{};
    /// How messages name the store ("" = "s3://bucket/prefix (endpoint ...)"); a gs:// store names
    /// itself so.
    std::string display_name{};
    int list_page_size = 1000;  ///< max-keys per ListObjectsV2 request, 1..1000

    /// The lease of lock(): not renewed for this long, it may be taken over (>= 1 s in practice;
    /// tests use less).
    std::chrono::milliseconds lock_ttl{30000};
    /// How long lock() waits for a lease held by someone else before throwing ConflictError.
    std::chrono::milliseconds lock_timeout{600000};
    RemoteOptions net{};  ///< timeouts, retries and limits of the requests
  };

  /// Resolves the options (environment for what is unset) and validates them; throws StoreError
  /// naming the setting that is wrong. Makes no request.
  static std::shared_ptr<S3Store> open(Options options);
  /// Use open(); public for std::make_shared.
  explicit S3Store(Options options);
  ~S3Store() override;
  S3Store(const S3Store&) = delete;
  S3Store& operator=(const S3Store&) = delete;

  const std::string& bucket() const { return options_.bucket; }  ///< the bucket
  const std::string& prefix() const { return options_.prefix; }  ///< the store root in the bucket
  const std::string& endpoint() const { return endpoint_; }      ///< the server's URL
  const std::string& region() const { return region_; }          ///< the region requests are signed for

  /// The object URL of a key (after validating it).
  std::string url_of(const std::string& key) const;
  /// Conditional writes and locking unless conditional_writes is Off (conditional erases in Auto
  /// mode only). This makes no request: in Auto mode the first conditional write or lock probes
  /// the server once and refuses clearly when it does not honour conditional PUTs.
  StoreCapabilities capabilities() const override;
  /// What the server honours, probed once in Auto mode (If-None-Match and If-Match on PUT,
  /// If-Match on DELETE) and remembered.
  StoreCapabilities confirm_capabilities() override;
  std::string describe() const override;
  /// Opened below the bucket's root: groups above the prefix are not looked at.
  bool parent_unseen() const override { return !options_.prefix.empty(); }
  std::string location() const override {
    return endpoint_ + "/" + options_.bucket + (options_.prefix.empty() ? "" : "/" + options_.prefix);
  }

 protected:
  /// Versions are ETags.
  std::optional<VersionedBytes> do_get(const std::string& key, const ByteRange& range,
                                       std::uint64_t max_bytes) override;
  std::optional<std::uint64_t> do_size(const std::string& key) override;
  /// A value that fails to decode: a HEAD says whether the GET's response was cut in transit.
  std::string do_explain_unreadable(const std::string& key) override;
  void do_set(const std::string& key, const Bytes& value) override;
  /// If-Match: ETag (or If-None-Match: *), so exactly the version read is replaced.
  bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) override;
  bool do_erase_if(const std::string& key, const std::optional<Version>& expected) override;
  void do_erase(const std::string& key) override;
  void do_erase_prefix(const std::string& prefix) override;
  std::vector<std::string> do_list_prefix(const std::string& prefix) override;
  DirListing do_list_dir(const std::string& prefix) override;
  /// A lease (see above). Waits up to lock_timeout for another holder (ConflictError after). The
  /// lease must not outlive the store.
  std::unique_ptr<StoreLock> do_lock(const std::string& key) override;
  /// The GET on the wire at once, with the store's other requests (up to net.max_in_flight).
  std::unique_ptr<PendingGet> do_start_get(const std::string& key, std::uint64_t max_bytes) override;

 private:
  struct Impl;
  std::optional<VersionedBytes> read_response(const std::string& key, const ByteRange& range,
                                              const detail::HttpRequest& req, detail::HttpResponse&& resp);
  detail::ConditionalSupport conditional();
  std::string off_why() const;  ///< why a conditional request cannot be made, for refusals

  Options options_;
  std::string endpoint_, region_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<detail::ConditionalProbe> probe_;
};

}  // namespace zarrpp
