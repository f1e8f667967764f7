// What the object stores do alike with object names: listings made into store keys, lease names.
#include <algorithm>
#include <cstdlib>

#include "object_service.hpp"

namespace zarrpp::detail {

namespace {
bool valid_key(const std::string& k) {
  try {
    validate_key(k);
    return true;
  } catch (const StoreError&) {
    return false;
  }
}
}  // namespace

std::vector<std::string> keys_under(const std::vector<std::string>& names, const std::string& root,
                                    const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& k : names) {
    if (k.compare(0, root.size(), root) != 0) continue;
    std::string rel = k.substr(root.size());
    if (rel.compare(0, prefix.size(), prefix) == 0 && valid_key(rel)) out.push_back(std::move(rel));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

DirListing dir_of(const std::vector<std::string>& names, const std::vector<std::string>& prefixes,
                  const std::string& full, const std::string& prefix) {
  DirListing out;
  for (const auto& k : names) {
    if (k.compare(0, full.size(), full) != 0) continue;
    std::string name = k.substr(full.size());
    if (!name.empty() && name.find('/') == std::string::npos && valid_key(prefix + name))
      out.keys.push_back(std::move(name));
  }
  for (const auto& cp : prefixes) {
    if (cp.compare(0, full.size(), full) != 0 || cp.size() <= full.size() + 1 || cp.back() != '/') continue;
    std::string name = cp.substr(full.size(), cp.size() - full.size() - 1);
    if (valid_key(prefix + name)) out.prefixes.push_back(std::move(name));
  }
  std::sort(out.keys.begin(), out.keys.end());
  std::sort(out.prefixes.begin(), out.prefixes.end());
  return out;
}

std::string lease_key(const std::string& key) {
  const auto slash = key.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : key.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  return dir + ".zarrpp-lock." + name;
}

std::optional<std::string> env_value(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

}  // namespace zarrpp::detail
