#pragma once
/// @file
/// Store wrappers for tests: one records every operation, one fails the Nth operation. Both pass
/// everything else through (streamed reads, conditional writes and locks included), so the real
/// store's paths run underneath.
#include <atomic>
#include <mutex>

#include "zarrpp/store/store.hpp"

namespace zarrpp {

/// One operation a RecordingStore saw (for tests of what zarrpp asks of a store).
struct StoreOp {
  /// The store operation.
  enum class Kind {
    Get,          ///< get / get_versioned
    GetStreamed,  ///< get_streamed
    Set,          ///< an unconditional set
    SetIf,        ///< a conditional set
    Erase,        ///< an unconditional erase
    EraseIf,      ///< a conditional erase
    ErasePrefix,  ///< erase_prefix
    ListPrefix,   ///< list_prefix
    ListDir,      ///< list_dir
    Lock,         ///< lock
    Size          ///< size
  };
  Kind kind;        ///< which operation
  std::string key;  ///< the key or prefix it was asked for
  ByteRange range;  ///< for Get and GetStreamed
};
/// The operation's name ("Get", "SetIf", ...).
std::string to_string(StoreOp::Kind k);

/// Records every operation passed to the wrapped store. compare_and_set shows as Get + SetIf,
/// exists as Size.
class RecordingStore : public StoreWrapper {
 public:
  explicit RecordingStore(StorePtr inner) : StoreWrapper(std::move(inner)) {}  ///< records the operations on `inner`
  std::vector<StoreOp> ops() const;                                            ///< the operations so far, in order
  void clear();                                                                ///< forgets them

  /// Keys of the given kinds of operation, in order (duplicates kept).
  std::vector<std::string> keys(std::initializer_list<StoreOp::Kind> kinds) const;
  std::string describe() const override { return "recording(" + inner()->describe() + ")"; }

 protected:
  std::optional<VersionedBytes> do_get(const std::string& key, const ByteRange& range,
                                       std::uint64_t max_bytes) override;
  bool do_get_streamed(const std::string& key, const ByteRange& range, std::size_t piece,
                       const PieceSink& sink) override;
  void do_set(const std::string& key, const Bytes& value) override;
  bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) override;
  bool do_erase_if(const std::string& key, const std::optional<Version>& expected) override;
  void do_erase(const std::string& key) override;
  void do_erase_prefix(const std::string& prefix) override;
  std::optional<std::uint64_t> do_size(const std::string& key) override;
  std::vector<std::string> do_list_prefix(const std::string& prefix) override;
  DirListing do_list_dir(const std::string& prefix) override;
  std::unique_ptr<StoreLock> do_lock(const std::string& key) override;

 private:
  void record(StoreOp::Kind k, const std::string& key, ByteRange r = ByteRange::all());
  mutable std::mutex mu_;
  std::vector<StoreOp> ops_;
};

/// Fails (throws StoreError) at the Nth operation (0-based) that is not a lock, then works again.
/// With `fail_forever`, every operation from the Nth on fails.
class FaultyStore : public StoreWrapper {
 public:
  /// Wraps `inner`; operation number `fail_at` fails (and, with `fail_forever`, every one after it).
  FaultyStore(StorePtr inner, std::int64_t fail_at, bool fail_forever = false)
      : StoreWrapper(std::move(inner)), fail_at_(fail_at), forever_(fail_forever) {}
  std::int64_t operations() const { return count_.load(); }  ///< operations seen so far
  bool fired() const { return fired_.load(); }               ///< whether the fault was injected
  std::string describe() const override { return "faulty(" + inner()->describe() + ")"; }

 protected:
  std::optional<VersionedBytes> do_get(const std::string& key, const ByteRange& range,
                                       std::uint64_t max_bytes) override;
  bool do_get_streamed(const std::string& key, const ByteRange& range, std::size_t piece,
                       const PieceSink& sink) override;
  void do_set(const std::string& key, const Bytes& value) override;
  bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) override;
  bool do_erase_if(const std::string& key, const std::optional<Version>& expected) override;
  void do_erase(const std::string& key) override;
  void do_erase_prefix(const std::string& prefix) override;
  std::optional<std::uint64_t> do_size(const std::string& key) override;
  std::vector<std::string> do_list_prefix(const std::string& prefix) override;
  DirListing do_list_dir(const std::string& prefix) override;

 private:
  void step(const char* op, const std::string& key);
  std::int64_t fail_at_;
  bool forever_;
  std::atomic<std::int64_t> count_{0};
  std::atomic<bool> fired_{false};
};

}  // namespace zarrpp
