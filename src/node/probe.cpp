// Whether two places share storage, found by writing: a marker written through one store and
// looked for through the other (node.hpp, probe_overlap). For stores whose identity zarrpp cannot
// see (a Python mapping over zarr-python's store, a proxy of a dict), where Store::identity_chain
// names the store object rather than the files behind it.
#include <random>
#include <set>

#include "../core/time_source.hpp"
#include "node.hpp"
#include "zarrpp/core/error.hpp"
#include "zarrpp/core/warning.hpp"

namespace zarrpp::node {

namespace {

std::string marker_name() {
  thread_local std::mt19937_64 rng{detail::random_seed()};
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

namespace {

// The node folders at and below `path` in `store` (where documents are), `path` first: a source
// store may be rooted at any of them, where a marker above its root would go unseen.
std::vector<std::string> node_folders(Store& store, const std::string& path) {
  std::vector<std::string> out{path};
  std::set<std::string> below;
  if (!store.capabilities().listing) return out;
  for (const auto& k : store.list_prefix(path.empty() ? "" : path + "/")) {
    const auto slash = k.rfind('/');
    const std::string name = slash == std::string::npos ? k : k.substr(slash + 1);
    if (name != "zarr.json" && name != ".zarray" && name != ".zgroup") continue;
    const std::string folder = slash == std::string::npos ? "" : k.substr(0, slash);
    if (folder != path) below.insert(folder);
  }
  out.insert(out.end(), below.begin(), below.end());
  return out;
}

}  // namespace

Overlap probe_overlap(Store& src, const std::string& src_path, Store& dst, const std::string& dst_path) {
  const std::string name = marker_name();
  const Bytes marker(name.begin(), name.end());
  std::vector<std::string> written;
  const auto take_back = [&] {
    for (const auto& key : written) {
      try {
        dst.erase(key);
      } catch (const Error& e) {
        warn("the marker '" + key + "' that checked whether " + dst.describe() +
             " reaches the source could not be removed again (" + e.what() + "); remove it by hand");
      }
    }
  };
  Overlap found = Overlap::none;
  try {
    // A marker in the destination's folder and in every node folder below it (a source store
    // rooted at one of them sees that one at its root).
    for (const auto& folder : node_folders(dst, dst_path)) {
      const std::string key = joined(folder, name);
      try {
        dst.set(key, marker);
      } catch (const Error& e) {
        throw_like(e, "cannot write into the destination " + dst.describe() + " ('" +
                          (dst_path.empty() ? "/" : dst_path) +
                          "'), which replacing the node there needs: " + e.what());
      }
      written.push_back(key);
    }
    found = find_marker(src, src_path, name, marker);
    if (found == Overlap::same && written.size() > 1) found = Overlap::first_inside_second;
  } catch (...) {
    take_back();
    throw;
  }
  take_back();
  return found;
}

}  // namespace zarrpp::node
