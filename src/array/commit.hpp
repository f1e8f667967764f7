#pragma once
// How a prepared stored object is written: the choice between a conditional and a blind write,
// and between erasing an object and writing it holding only the fill value.
#include "../codec/chunk_codec.hpp"

namespace zarrpp {

// Writes or erases the object as `w` says. When `w` was built from the old object (read_old) and
// the store can write conditionally, only if the object is still the one read: false, changing
// nothing, when a concurrent writer changed it in between (prepare again and retry).
[[nodiscard]] bool commit(StoredChunk& target, PendingWrite&& w);

}  // namespace zarrpp
