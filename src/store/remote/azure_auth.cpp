#include "azure_auth.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <utility>

#include "encoding.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp::detail {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// RFC 1123 in GMT, with English names whatever the locale.
std::string http_date(std::time_t t) {
  static constexpr const char* days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                           "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon],
                tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

// The URL's path (as sent, percent-encoded) and its query (after '?'), "" when none.
std::pair<std::string, std::string> path_and_query(const std::string& url) {
  const auto scheme = url.find("://");
  const auto start = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (start == std::string::npos) return {"/", ""};
  const auto q = url.find('?', start);
  if (q == std::string::npos) return {url.substr(start), ""};
  return {url.substr(start, q - start), url.substr(q + 1)};
}

// Query parameters by lower-cased name, values decoded and sorted, as Shared Key canonicalizes them.
std::string canonical_parameters(const std::string& query) {
  std::map<std::string, std::vector<std::string>> params;
  std::size_t pos = 0;
  while (pos <= query.size() && !query.empty()) {
    const auto amp = query.find('&', pos);
    const std::string part = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    if (!part.empty()) {
      const auto eq = part.find('=');
      const std::string name = percent_decode(part.substr(0, eq), "query parameter");
      const std::string value = eq == std::string::npos ? "" : percent_decode(part.substr(eq + 1), "query value");
      params[lower(name)].push_back(value);
    }
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  std::string out;
  for (auto& [name, values] : params) {
    std::sort(values.begin(), values.end());
    out += "\n" + name + ":";
    for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + values[i];
  }
  return out;
}

}  // namespace

std::map<std::string, std::string> parse_connection_string(std::string_view text) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto semi = text.find(';', pos);
    const std::string_view part =
        text.substr(pos, semi == std::string_view::npos ? std::string_view::npos : semi - pos);
    pos = semi == std::string_view::npos ? text.size() : semi + 1;
    if (trimmed(part).empty()) continue;
    const auto eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw StoreError("AzureStore: the connection string has a part that is not Key=value ('" +
                       std::string(part.substr(0, 40)) + "')");
    out[trimmed(part.substr(0, eq))] = trimmed(part.substr(eq + 1));
  }
  return out;
}

namespace {

std::optional<std::string> setting(const std::map<std::string, std::string>& cs, const char* name) {
  for (const auto& [k, v] : cs)
    if (lower(k) == lower(name) && !v.empty()) return v;
  return std::nullopt;
}

bool development(const std::map<std::string, std::string>& cs) {
  return lower(setting(cs, "UseDevelopmentStorage").value_or("")) == "true";
}

std::string endpoint_of(const std::map<std::string, std::string>& cs, const std::string& account) {
  if (auto e = setting(cs, "BlobEndpoint")) return *e;
  if (development(cs)) return std::string("http://127.0.0.1:10000/") + kAzuriteAccount;
  if (account.empty()) return "";
  const std::string proto = setting(cs, "DefaultEndpointsProtocol").value_or("https");
  const std::string suffix = setting(cs, "EndpointSuffix").value_or("core.windows.net");
  return proto + "://" + account + ".blob." + suffix;
}

// The first non-empty of `options`.
std::string first_of(std::initializer_list<std::optional<std::string>> options) {
  for (const auto& o : options)
    if (o && !o->empty()) return *o;
  return "";
}

}  // namespace

AzureAccess resolve_azure_access(const AzureGiven& given,
                                 const std::function<std::optional<std::string>(const char*)>& env) {
  const auto text = given.connection_string ? given.connection_string : env("AZURE_STORAGE_CONNECTION_STRING");
  const auto cs = text ? parse_connection_string(*text) : std::map<std::string, std::string>{};
  const std::string cs_account = setting(cs, "AccountName").value_or(development(cs) ? kAzuriteAccount : "");
  const std::string env_account = env("AZURE_STORAGE_ACCOUNT_NAME").value_or("");
  AzureAccess a;
  a.account = first_of({given.account, cs_account, env_account});
  // Credentials found in a connection string or the environment are used only for the account
  // they name: never sent to another account a URL names.
  const bool cs_ours = cs_account.empty() ? !given.account : cs_account == a.account;
  const bool env_ours = env_account.empty() ? !given.account : env_account == a.account;
  std::string key, sas;
  if (!given.anonymous) {
    key = first_of({given.key, cs_ours ? setting(cs, "AccountKey") : std::nullopt,
                    cs_ours && development(cs) ? std::optional<std::string>(kAzuriteKey) : std::nullopt,
                    env_ours ? env("AZURE_STORAGE_ACCOUNT_KEY") : std::nullopt});
    sas = first_of({given.sas, cs_ours ? setting(cs, "SharedAccessSignature") : std::nullopt,
                    env_ours ? env("AZURE_STORAGE_SAS_TOKEN") : std::nullopt});
  }
  if (!key.empty()) sas.clear();  // one credential: the key signs every request
  if (!sas.empty() && sas.front() == '?') sas.erase(sas.begin());
  if (sas.find_first_of("#\r\n ") != std::string::npos)
    throw StoreError("AzureStore: the SAS token has a character no URL query may hold");
  a.sas = sas;
  if (!key.empty()) {
    auto decoded = base64_decode(key);
    if (!decoded || decoded->empty())
      throw StoreError("AzureStore: the account key is not base64 (copy it whole from the portal's Access keys)");
    a.key = std::move(*decoded);
  }
  a.endpoint =
      given.endpoint ? *given.endpoint : endpoint_of(cs_ours ? cs : std::map<std::string, std::string>{}, a.account);
  if (a.endpoint.empty())
    throw StoreError(
        "AzureStore: no account given: set account_name (or AZURE_STORAGE_ACCOUNT_NAME, or a connection string "
        "in AZURE_STORAGE_CONNECTION_STRING), or an endpoint");
  while (!a.endpoint.empty() && a.endpoint.back() == '/') a.endpoint.pop_back();
  if (a.account.empty() && !a.key.empty())
    throw StoreError(
        "AzureStore: an account key is set but no account name (account_name, AZURE_STORAGE_ACCOUNT_NAME)");
  return a;
}

std::string azure_string_to_sign(const HttpRequest& req, const std::string& account) {
  std::map<std::string, std::string> std_headers, ms_headers;
  for (const auto& h : req.headers) {
    const auto colon = h.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = lower(h.substr(0, colon));
    const std::string value = trimmed(std::string_view(h).substr(colon + 1));
    (name.rfind("x-ms-", 0) == 0 ? ms_headers : std_headers)[name] = value;
  }
  auto header = [&](const char* name) {
    const auto it = std_headers.find(name);
    return it == std_headers.end() ? std::string() : it->second;
  };
  const std::string length = req.body.empty() ? "" : std::to_string(req.body.size());
  std::string s = req.method + "\n" + header("content-encoding") + "\n" + header("content-language") + "\n" + length +
                  "\n" + header("content-md5") + "\n" + header("content-type") + "\n" + header("date") + "\n" +
                  header("if-modified-since") + "\n" + header("if-match") + "\n" + header("if-none-match") + "\n" +
                  header("if-unmodified-since") + "\n" + header("range") + "\n";
  for (const auto& [name, value] : ms_headers) s += name + ":" + value + "\n";
  const auto [path, query] = path_and_query(req.url);
  s += "/" + account + path + canonical_parameters(query);
  return s;
}

void azure_sign(HttpRequest& req, const AzureAccess& access) {
  // libcurl sends a form Content-Type with a PUT or POST that names none: name one, so the header
  // sent is the header signed.
  const bool typed = std::any_of(req.headers.begin(), req.headers.end(),
                                 [](const std::string& h) { return lower(h.substr(0, 13)) == "content-type:"; });
  if ((req.method == "PUT" || req.method == "POST") && !typed)
    req.headers.emplace_back("Content-Type: application/octet-stream");
  req.headers.push_back("x-ms-date: " + http_date(std::time(nullptr)));
  req.headers.push_back(std::string("x-ms-version: ") + kAzureApiVersion);
  if (access.key.empty()) return;
  const std::string to_sign = azure_string_to_sign(req, access.account);
  req.headers.push_back("Authorization: SharedKey " + access.account + ":" +
                        hmac_sha256_base64(access.key, as_bytes(to_sign)));
}

}  // namespace zarrpp::detail
