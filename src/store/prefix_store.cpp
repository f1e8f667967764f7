// PrefixStore: every operation goes to the inner store with the prefix put in front of the key,
// and listings come back without it.
#include "zarrpp/store/prefix_store.hpp"

#include <memory>

#include "zarrpp/core/error.hpp"

namespace zarrpp {

PrefixStore::PrefixStore(StorePtr inner, std::string prefix, bool read_only)
    : inner_(std::move(inner)), prefix_(std::move(prefix)), read_only_(read_only) {
  if (!inner_) throw ArgumentError("PrefixStore: no store given");
  while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
  if (prefix_.empty()) throw ArgumentError("PrefixStore: an empty prefix (use the store itself)");
  try {
    validate_key(prefix_);
  } catch (const Error& e) {
    throw ArgumentError(std::string("PrefixStore: the path is not a valid key: ") + e.what());
  }
}

StorePtr PrefixStore::at(StorePtr inner, const std::string& path) {
  std::string p = path;
  while (!p.empty() && p.back() == '/') p.pop_back();
  while (!p.empty() && p.front() == '/') p.erase(0, 1);
  if (p.empty()) return inner;
  if (const auto* outer = dynamic_cast<const PrefixStore*>(inner.get()))
    return std::make_shared<PrefixStore>(outer->inner(), outer->prefix() + "/" + p, outer->read_only());
  return std::make_shared<PrefixStore>(std::move(inner), p);
}

std::optional<Store::Parent> PrefixStore::parent() const {
  const auto slash = prefix_.rfind('/');
  if (slash == std::string::npos) return Parent{inner_, prefix_};
  return Parent{std::make_shared<PrefixStore>(inner_, prefix_.substr(0, slash), read_only_), prefix_.substr(slash + 1)};
}

std::optional<VersionedBytes> PrefixStore::do_get(const std::string& key, const ByteRange& range,
                                                  std::uint64_t max_bytes) {
  return inner_->get_versioned(full(key), range, max_bytes);
}
void PrefixStore::do_set(const std::string& key, const Bytes& value) { inner_->set(full(key), value); }
void PrefixStore::do_erase(const std::string& key) { inner_->erase(full(key)); }
std::vector<std::string> PrefixStore::do_list_prefix(const std::string& prefix) {
  auto keys = inner_->list_prefix(prefix_ + "/" + prefix);
  for (auto& k : keys) k.erase(0, prefix_.size() + 1);
  return keys;
}
std::optional<std::uint64_t> PrefixStore::do_size(const std::string& key) { return inner_->size(full(key)); }
std::unique_ptr<PendingGet> PrefixStore::do_start_get(const std::string& key, std::uint64_t max_bytes) {
  return inner_->start_get(full(key), max_bytes);
}
bool PrefixStore::do_get_streamed(const std::string& key, const ByteRange& range, std::size_t piece,
                                  const PieceSink& sink) {
  return inner_->get_streamed(full(key), range, piece, sink);
}
bool PrefixStore::do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) {
  return inner_->set(full(key), value, WriteOptions::if_equal(expected));
}
bool PrefixStore::do_erase_if(const std::string& key, const std::optional<Version>& expected) {
  return inner_->erase(full(key), WriteOptions::if_equal(expected));
}
void PrefixStore::do_erase_prefix(const std::string& prefix) { inner_->erase_prefix(prefix_ + "/" + prefix); }
void PrefixStore::do_prune_empty(const std::string& prefix) { inner_->prune_empty(prefix_ + "/" + prefix); }
DirListing PrefixStore::do_list_dir(const std::string& prefix) { return inner_->list_dir(prefix_ + "/" + prefix); }
std::unique_ptr<StoreLock> PrefixStore::do_lock(const std::string& key) { return inner_->lock(full(key)); }
void PrefixStore::do_check_can_write(const std::string& key, const Bytes& probe) {
  inner_->check_can_write(full(key), probe);
}
std::string PrefixStore::do_explain_unreadable(const std::string& key) { return inner_->explain_unreadable(full(key)); }

}  // namespace zarrpp
