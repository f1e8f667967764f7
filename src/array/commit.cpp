#include "commit.hpp"

namespace zarrpp {

bool commit(StoredChunk& target, PendingWrite&& w) {
  Store& store = target.store();
  // What was built from the old object is written only over that same object: a concurrent
  // writer's change in between makes this return false, and the caller builds again.
  const bool conditional = w.read_old && store.capabilities().conditional_writes;
  const WriteOptions options = conditional ? WriteOptions::if_equal(w.based_on) : WriteOptions{};
  switch (w.kind) {
    case PendingWrite::Kind::none:
      return true;
    case PendingWrite::Kind::set:
      return store.set(target.key(), w.bytes, options);
    case PendingWrite::Kind::erase:
      // A store that cannot erase conditionally (an S3 server without If-Match on DELETE) keeps
      // the old object's place with the fill value instead, which it can write conditionally
      // (read back as the same elements).
      if (conditional && w.based_on && w.fill_encoded && !store.confirm_capabilities().conditional_erase)
        return store.set(target.key(), *w.fill_encoded, options);
      return store.erase(target.key(), options);
  }
  return true;
}

}  // namespace zarrpp
