#pragma once
/// @file
/// Azure Blob Storage (and Azurite, its emulator): a container's blobs as a store, addressed
/// ENDPOINT/container/blob, where ENDPOINT is https://ACCOUNT.blob.core.windows.net (or an
/// emulator's http://127.0.0.1:10000/ACCOUNT).
///
/// The store is rooted at `container` + `prefix`, as S3Store is at its bucket and prefix.
/// Authentication, the first that applies: an account key (Shared Key signing of every request), a
/// SAS token (appended to every URL), else anonymous (public containers). Settings not given come
/// from a connection string (Options::connection_string, else AZURE_STORAGE_CONNECTION_STRING:
/// AccountName, AccountKey, SharedAccessSignature, BlobEndpoint, DefaultEndpointsProtocol,
/// EndpointSuffix, UseDevelopmentStorage=true), then from AZURE_STORAGE_ACCOUNT_NAME,
/// AZURE_STORAGE_ACCOUNT_KEY and AZURE_STORAGE_SAS_TOKEN, as the Azure tools and adlfs read them.
///
/// Writes are conditioned on ETags as on S3 (If-None-Match: * to create, If-Match to replace and
/// delete; Azure answers 409 BlobAlreadyExists or 412 when such a condition fails), found out once
/// per store by the same probe, so a proxy that drops the headers is seen and growth refused. The
/// lock is the same lease of conditional PUTs (see s3_store.hpp).
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "zarrpp/store/http_store.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp {

namespace detail {
struct ConditionalSupport;
class ConditionalProbe;
}  // namespace detail

/// A store in an Azure Blob Storage container: Shared Key, SAS or anonymous access; conditional
/// writes with If-Match / If-None-Match; bounded and retried requests.
class AzureStore : public Store {
 public:
  /// The container, prefix, account and credentials (a connection string and the AZURE_STORAGE_*
  /// environment fill in what is not given), and the network bounds.
  struct Options {
    std::string container{};  ///< required
    std::string prefix{};     ///< the store root inside the container ("" = whole container)
    std::optional<std::string> account_name = std::nullopt;       ///< the storage account
    std::optional<std::string> account_key = std::nullopt;        ///< base64: Shared Key signing
    std::optional<std::string> sas_token = std::nullopt;          ///< "sv=...&sig=..." (a leading '?' is dropped)
    std::optional<std::string> connection_string = std::nullopt;  ///< unset = AZURE_STORAGE_CONNECTION_STRING
    /// The blob service's URL ("https://ACCOUNT.blob.core.windows.net", an emulator's
    /// "http://127.0.0.1:10000/devstoreaccount1"); unset = the connection string's, else Azure's.
    std::optional<std::string> endpoint = std::nullopt;
    bool anonymous = false;     ///< never sign nor add a SAS token, even when credentials are found
    bool read_only = false;     ///< refuse every write (StoreError read_only); nothing is asked of the server
    int list_page_size = 5000;  ///< maxresults per List Blobs request, 1..5000
    std::chrono::milliseconds lock_ttl{30000};       ///< as S3Store::Options::lock_ttl
    std::chrono::milliseconds lock_timeout{600000};  ///< as S3Store::Options::lock_timeout
    RemoteOptions net{};                             ///< timeouts, retries and limits of the requests
  };

  /// Resolves the options (connection string and environment for what is unset) and validates
  /// them; throws StoreError naming the setting that is wrong. Makes no request.
  static std::shared_ptr<AzureStore> open(Options options);
  /// Use open(); public for std::make_shared.
  explicit AzureStore(Options options);
  ~AzureStore() override;
  AzureStore(const AzureStore&) = delete;
  AzureStore& operator=(const AzureStore&) = delete;

  const std::string& container() const { return options_.container; }  ///< the container
  const std::string& prefix() const { return options_.prefix; }        ///< the store root in the container
  const std::string& endpoint() const { return endpoint_; }            ///< the blob service's URL
  const std::string& account() const { return account_; }              ///< the storage account

  /// Creates the container (Create Container); true when made, false when it was there. zarrpp
  /// never does this unasked: opening, reading and writing a missing container fail, naming it.
  bool create_container();
  /// The blob URL of a key (after validating it; without the SAS token).
  std::string url_of(const std::string& key) const;
  /// Conditional writes and locking (asked of the server by the first conditional write).
  StoreCapabilities capabilities() const override;
  /// What the server honours, probed once and remembered.
  StoreCapabilities confirm_capabilities() override;
  std::string describe() const override;
  bool parent_unseen() const override { return !options_.prefix.empty(); }
  std::string location() const override {
    return endpoint_ + "/" + options_.container + (options_.prefix.empty() ? "" : "/" + options_.prefix);
  }

 protected:
  /// Versions are ETags.
  std::optional<VersionedBytes> do_get(const std::string& key, const ByteRange& range,
                                       std::uint64_t max_bytes) override;
  std::optional<std::uint64_t> do_size(const std::string& key) override;
  std::string do_explain_unreadable(const std::string& key) override;
  void do_set(const std::string& key, const Bytes& value) override;
  bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) override;
  bool do_erase_if(const std::string& key, const std::optional<Version>& expected) override;
  void do_erase(const std::string& key) override;
  void do_erase_prefix(const std::string& prefix) override;
  std::vector<std::string> do_list_prefix(const std::string& prefix) override;
  DirListing do_list_dir(const std::string& prefix) override;
  std::unique_ptr<StoreLock> do_lock(const std::string& key) override;
  std::unique_ptr<PendingGet> do_start_get(const std::string& key, std::uint64_t max_bytes) override;

 private:
  struct Impl;
  std::optional<VersionedBytes> read_response(const std::string& key, const ByteRange& range,
                                              const detail::HttpRequest& req, detail::HttpResponse&& resp);
  detail::ConditionalSupport conditional();

  Options options_;
  std::string endpoint_, account_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<detail::ConditionalProbe> probe_;
};

}  // namespace zarrpp
