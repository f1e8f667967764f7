#pragma once
/// @file
/// A store opened at a folder inside another store: zarr-python's store + path (`StorePath`), as a
/// store of its own (a `memory://name/a/b` URL is the named memory store's keys under "a/b/").
#include <string>

#include "zarrpp/store/store.hpp"

namespace zarrpp {

/// A folder of another store seen as a store of its own: every key gets the prefix.
class PrefixStore : public Store {
 public:
  /// `prefix`: a key ("a/b"); a trailing '/' is dropped. ArgumentError for an empty or invalid one.
  /// `read_only`: refuse every write (StoreError read_only), whatever the inner store allows.
  PrefixStore(StorePtr inner, std::string prefix, bool read_only = false);
  /// The store at `path` inside `inner`: `inner` itself for "", else a PrefixStore (one over the
  /// innermost store when `inner` is a PrefixStore already).
  static StorePtr at(StorePtr inner, const std::string& path);

  const StorePtr& inner() const { return inner_; }       ///< the store this one is a folder of
  const std::string& prefix() const { return prefix_; }  ///< the folder (with a trailing '/')

  bool read_only() const { return read_only_; }  ///< whether writes are refused
  StoreCapabilities capabilities() const override { return limited(inner_->capabilities()); }
  StoreCapabilities confirm_capabilities() override { return limited(inner_->confirm_capabilities()); }
  std::string describe() const override { return inner_->describe() + "/" + prefix_; }
  std::string location() const override { return inner_->location() + "/" + prefix_; }
  std::vector<std::string> identity_chain(const std::string& path) const override {
    return inner_->identity_chain(full(path));
  }
  /// One folder up inside the inner store (the inner store itself above the first segment).
  std::optional<Parent> parent() const override;
  bool parent_unseen() const override { return inner_->parent_unseen(); }

 protected:
  std::optional<VersionedBytes> do_get(const std::string& key, const ByteRange& range,
                                       std::uint64_t max_bytes) override;
  void do_set(const std::string& key, const Bytes& value) override;
  void do_erase(const std::string& key) override;
  std::vector<std::string> do_list_prefix(const std::string& prefix) override;
  std::optional<std::uint64_t> do_size(const std::string& key) override;
  std::unique_ptr<PendingGet> do_start_get(const std::string& key, std::uint64_t max_bytes) override;
  bool do_get_streamed(const std::string& key, const ByteRange& range, std::size_t piece,
                       const PieceSink& sink) override;
  bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) override;
  bool do_erase_if(const std::string& key, const std::optional<Version>& expected) override;
  void do_erase_prefix(const std::string& prefix) override;
  void do_prune_empty(const std::string& prefix) override;
  DirListing do_list_dir(const std::string& prefix) override;
  std::unique_ptr<StoreLock> do_lock(const std::string& key) override;
  void do_check_can_write(const std::string& key, const Bytes& probe) override;
  std::string do_explain_unreadable(const std::string& key) override;

 private:
  /// The inner store's key (or prefix) for one of this store's.
  std::string full(const std::string& key) const { return key.empty() ? prefix_ : prefix_ + "/" + key; }
  StoreCapabilities limited(StoreCapabilities c) const {
    if (read_only_) c.writable = false;
    return c;
  }
  StorePtr inner_;
  std::string prefix_;
  bool read_only_ = false;
};

}  // namespace zarrpp
