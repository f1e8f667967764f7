#pragma once
// Azurite, the Azure Storage emulator (npm, pinned in tests/interop/package-lock.json), started on
// a free loopback port for the AzureStore tests, with the plumbing they need: containers made with
// a Shared Key request, account SAS tokens signed as Azure signs them.
#include <ctime>

#include "harness.hpp"
#include "store/remote/azure_auth.hpp"
#include "store/remote/encoding.hpp"
#include "zarrpp/store/azure_store.hpp"

namespace zarrpp::test {

// Where `npm ci` in tests/interop puts Azurite's blob server.
inline std::string azurite_program() {
  if (const char* p = std::getenv("ZARRPP_AZURITE")) return p;
  const fs::path here = fs::path(__FILE__).parent_path().parent_path();
  const fs::path bin = here / "interop" / "node_modules" / ".bin" / "azurite-blob";
  return fs::exists(bin) ? bin.string() : find_program("azurite-blob");
}

class Azurite {
 public:
  Azurite() {
    const std::string bin = azurite_program();
    if (bin.empty())
      throw std::runtime_error("azurite-blob not found: run `npm ci` in tests/interop (scripts/setup.sh does)");
    port_ = free_port();
    endpoint_ = "http://127.0.0.1:" + std::to_string(port_) + "/" + detail::kAzuriteAccount;
    const fs::path log = dir_.path() / "azurite.log";
    proc_ = std::make_unique<Process>(
        std::vector<std::string>{bin, "--blobHost", "127.0.0.1", "--blobPort", std::to_string(port_),
                                 "--inMemoryPersistence", "--disableProductStyleUrl", "--skipApiVersionCheck"},
        log);
    wait_for_port(port_, *proc_, "azurite-blob", log, 60s);
  }
  ~Azurite() { proc_.reset(); }

  const std::string& endpoint() const { return endpoint_; }
  int port() const { return port_; }
  std::string connection_string(const std::string& endpoint = "") const {
    return std::string("DefaultEndpointsProtocol=http;AccountName=") + detail::kAzuriteAccount +
           ";AccountKey=" + detail::kAzuriteKey + ";BlobEndpoint=" + (endpoint.empty() ? endpoint_ : endpoint) + ";";
  }

  // Makes `name`; an existing one is kept.
  void create_container(const std::string& name) const { AzureStore::open(options(name, ""))->create_container(); }

  // An account SAS for the blob service (all permissions unless `permissions`), valid until `expiry`.
  std::string account_sas(std::time_t expiry, const std::string& permissions = "rwdlac") const {
    char se[32];
    std::tm tm{};
    gmtime_r(&expiry, &tm);
    std::strftime(se, sizeof se, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const std::string sv = detail::kAzureApiVersion;
    const std::string to_sign = std::string(detail::kAzuriteAccount) + "\n" + permissions + "\nb\nsco\n\n" + se +
                                "\n\nhttps,http\n" + sv + "\n\n";
    const auto key = detail::base64_decode(detail::kAzuriteKey).value();
    const std::string sig = detail::hmac_sha256_base64(key, detail::as_bytes(to_sign));
    return "sv=" + sv + "&ss=b&srt=sco&sp=" + permissions + "&se=" + detail::percent_encode(se, false) +
           "&spr=https,http&sig=" + detail::percent_encode(sig, false);
  }

  // Options for a store in `container` at `prefix`, signed with the account key.
  AzureStore::Options options(const std::string& container, const std::string& prefix) const {
    AzureStore::Options o;
    o.container = container;
    o.prefix = prefix;
    o.connection_string = connection_string();
    o.net = quick_net();
    return o;
  }

 private:
  TempDir dir_{"azurite"};
  int port_ = 0;
  std::string endpoint_;
  std::unique_ptr<Process> proc_;
};

inline constexpr const char* kContainer = "zarrpp-test";

class AzureStoreAzurite : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    if (!server_) {
      try {
        server_ = std::make_unique<Azurite>();
        server_->create_container(kContainer);
      } catch (const std::exception& e) {
        FAIL() << "cannot start Azurite for the AzureStore tests: " << e.what();
      }
    }
  }
  Azurite& azurite() { return *server_; }
  // A store rooted at a prefix of its own for each test.
  std::shared_ptr<AzureStore> store(const std::string& name) {
    return AzureStore::open(azurite().options(
        kContainer, std::string("t/") + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                        (name.empty() ? "" : "/" + name)));
  }
  static inline std::unique_ptr<Azurite> server_;
};

}  // namespace zarrpp::test
