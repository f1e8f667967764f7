// Whether two places share storage, found by writing: a marker written through one store and
// looked for through the other (node.hpp, probe_overlap). For stores whose identity zarrpp cannot
// see (a Python mapping over zarr-python's store, a proxy of a dict), where Store::identity_chain
// names the store object rather than the files behind it.
#include <random>

#include "node.hpp"
#include "zarrpp/core/error.hpp"
#include "zarrpp/core/warning.hpp"

namespace zarrpp::node {

namespace {

std::string marker_name() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string s = "zarrpp-overlap-probe-";
  for (int i = 0; i < 16; ++i) s += hex[rng() % 16];
  return s;
}

std::string joined(const std::string& path, const std::string& name) { return path.empty() ? name : path + "/" + name; }

// Whether `store` holds the marker at `key`.
bool holds(Store& store, const std::string& key, const Bytes& marker) {
  try {
    const auto got = store.get(key, ByteRange::all(), marker.size() + 1);
    return got && *got == marker;
  } catch (const Error&) {
    return false;  // a key that cannot be read there is not the marker
  }
}

// Where `src` sees the marker written at the destination's node folder: in the source's node
// folder (the same node), in a folder above it (the source lies inside the destination), or below
// it (the destination lies inside the source).
Overlap find_marker(Store& src, const std::string& src_path, const std::string& name, const Bytes& marker) {
  if (holds(src, joined(src_path, name), marker)) return Overlap::same;
  for (std::string p = src_path; !p.empty();) {
    const auto slash = p.rfind('/');
    p = slash == std::string::npos ? "" : p.substr(0, slash);
    if (holds(src, joined(p, name), marker)) return Overlap::first_inside_second;
  }
  // Above the store's root, where the store can reach its folder's parents (local folders).
  auto up = src.parent();
  for (int level = 0; up && level < 256; ++level) {
    if (holds(*up->store, name, marker)) return Overlap::first_inside_second;
    up = up->store->parent();
  }
  if (src.capabilities().listing)
    for (const auto& k : src.list_prefix(src_path.empty() ? "" : src_path + "/"))
      if (k.size() > name.size() && k.compare(k.size() - name.size() - 1, std::string::npos, "/" + name) == 0)
        return Overlap::second_inside_first;
  return Overlap::none;
}

}  // namespace

Overlap probe_overlap(Store& src, const std::string& src_path, Store& dst, const std::string& dst_path) {
  const std::string name = marker_name();
  const std::string key = joined(dst_path, name);
  const Bytes marker(name.begin(), name.end());
  dst.set(key, marker);
  Overlap found = Overlap::none;
  try {
    found = find_marker(src, src_path, name, marker);
  } catch (...) {
    try {
      dst.erase(key);
    } catch (...) {
    }
    throw;
  }
  try {
    dst.erase(key);
  } catch (const Error& e) {
    warn("the marker '" + key + "' that checked whether " + dst.describe() +
         " reaches the source could not be removed again (" + e.what() + "); remove it by hand");
  }
  return found;
}

}  // namespace zarrpp::node
