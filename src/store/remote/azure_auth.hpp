#pragma once
// Azure Blob Storage's settings and signing: connection strings, where the account, credentials
// and endpoint come from, and Shared Key signatures. Pure functions (no request), so they can be
// tested and fuzzed without a server.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "transport.hpp"

namespace zarrpp::detail {

// Azurite's (and the old storage emulator's) well-known development account.
inline constexpr const char* kAzuriteAccount = "devstoreaccount1";
inline constexpr const char* kAzuriteKey =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

// "Key=value;Key=value" into its pairs (keys as written; values may hold '='). Throws StoreError
// naming the part that is not "key=value".
std::map<std::string, std::string> parse_connection_string(std::string_view text);

// What a store signs with and where it sends requests.
struct AzureAccess {
  std::string account{};
  std::vector<std::uint8_t> key{};  // decoded account key; empty: not signed
  std::string sas{};                // SAS token without '?'; empty: none
  std::string endpoint{};           // the blob service URL, without a trailing '/'
};

// The explicit settings of a store (nullopt: not given).
struct AzureGiven {
  std::optional<std::string> account = std::nullopt, key = std::nullopt, sas = std::nullopt,
                             connection_string = std::nullopt, endpoint = std::nullopt;
  bool anonymous = false;
};

// Resolves the settings: given ones first, then the connection string (given, else
// AZURE_STORAGE_CONNECTION_STRING), then AZURE_STORAGE_ACCOUNT_NAME / _ACCOUNT_KEY / _SAS_TOKEN.
// `env` reads the environment (nullopt when unset or empty). Throws StoreError naming what is
// missing or malformed.
AzureAccess resolve_azure_access(const AzureGiven& given,
                                 const std::function<std::optional<std::string>(const char*)>& env);

// The Shared Key string to sign of `req` (its headers as they will be sent, x-ms-date included)
// for `account`: the verb, the standard headers in their fixed order, the x-ms-* headers sorted,
// then /ACCOUNT + the URL's path and its query parameters sorted.
std::string azure_string_to_sign(const HttpRequest& req, const std::string& account);

// Adds x-ms-date (now) and x-ms-version (and a Content-Type to a PUT or POST without one), and the
// Authorization header when `access` has a key.
void azure_sign(HttpRequest& req, const AzureAccess& access);

// The x-ms-version every request carries.
inline constexpr const char* kAzureApiVersion = "2021-12-02";

}  // namespace zarrpp::detail
