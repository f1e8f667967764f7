#pragma once
// The state behind an Array handle, shared by array.cpp (public behaviour) and growth.cpp.
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

#include "engine.hpp"
#include "index_cache.hpp"
#include "zarrpp/array/array.hpp"
#include "zarrpp/core/thread_pool.hpp"

namespace zarrpp {

struct Array::State {
  StorePtr store;
  std::string path, prefix;
  mutable std::mutex mu;
  std::shared_ptr<const Snapshot> snap;
  std::atomic<std::size_t> concurrency{default_concurrency()};
  std::atomic<bool> write_empty{false};
  std::shared_ptr<const ProgressCallback> progress;  // guarded by mu; null: none
  // Shard indexes read through this handle, on a remote store (index_cache.hpp).
  std::shared_ptr<ShardIndexCache> index_cache = std::make_shared<ShardIndexCache>();

  std::shared_ptr<const ProgressCallback> progress_callback() const {
    std::lock_guard lk(mu);
    return progress;
  }
  // Reports `objects` removed objects (resize).
  void report_removed(std::int64_t objects) const {
    if (const auto p = progress_callback()) (*p)(ProgressStep{.objects = objects, .bytes = 0});
  }

  std::shared_ptr<const Snapshot> current() const {
    std::lock_guard lk(mu);
    return snap;
  }
  void publish(std::shared_ptr<const Snapshot> s) {
    std::lock_guard lk(mu);
    snap = std::move(s);
  }
  Engine engine(const Snapshot& s) const {
    const bool remote = store->capabilities().reads_in_flight > 1;
    return Engine{*store,
                  s,
                  prefix,
                  concurrency.load(),
                  write_empty.load(),
                  nullptr,
                  true,
                  progress_callback(),
                  remote ? index_cache : nullptr};
  }
  // For growth's data work: a failure there means "not applied" (modify says so), so the engine
  // does not count the chunks it wrote.
  Engine growth_engine(const Snapshot& s) const {
    Engine e = engine(s);
    e.count_written = false;
    return e;
  }

  // Changes zarr.json: reload, compute the new metadata, do the data work that must come first
  // (`before`), then compare-and-swap zarr.json; `after` runs once the new metadata is in place.
  // Growth writes chunk data before the metadata and shrinking deletes chunks after it, so two
  // domain changes must not interleave: with `before` or `after` the store's lock is held
  // throughout. Metadata-only changes are safe with compare-and-swap alone and take no lock (on
  // S3 a lock costs requests).
  void modify(const std::function<ArrayMetadata(const Snapshot&)>& compute,
              const std::function<void(const Snapshot& cur, const Snapshot& next)>& before,
              const std::function<void(const Snapshot& cur, const Snapshot& next)>& after);
  std::string remove_new_chunks(const Snapshot& cur, const Snapshot& next, const StoreLock* lock) const;

  // A change under the lock is applied exactly once, whatever became of its write's answer:
  // a refused (412) or failed compare-and-swap whose first copy reached the store is recognised
  // by what is stored (landed) rather than applied again.
  static bool landed(const Snapshot& before_change, const Snapshot& proposed, const Snapshot& stored);
  std::shared_ptr<const Snapshot> parse_stored(const Bytes& bytes, int format, const Json& v2_attrs) const;
  std::shared_ptr<const Snapshot> after_failed_switch(const Error& e, const Snapshot& cur, const Snapshot& next,
                                                      int format, const Json& v2_attrs, const StoreLock* lock) const;
};

}  // namespace zarrpp
