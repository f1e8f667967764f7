#pragma once
// Zip files across processes: forked and exec'd writer processes growing one array in a real zip
// archive at both ends, reader processes checking what they see, and the parent killing writers
// at seeded moments (a crash at any point of a growth or a commit). Checked by the model's rules
// for growth: a growth that succeeded is in the archive exactly once, whole; one that failed is
// not; one killed mid-way is whole or absent; a reader never sees a part of one. Real processes
// and real time: a seed decides the operations and the kill times, not the interleaving, so a run
// is not replayed bit for bit.
#include <cstdint>
#include <string>
#include <vector>

namespace zarrpp::sim {

struct ZipRunResult {
  std::uint64_t growths_ok = 0, growths_failed = 0, growths_killed = 0, reads = 0, kills = 0, processes = 0;
  std::uint64_t violation_count = 0;
  std::vector<std::string> violations;
};

// The parent: `writers` writer processes and one reader for `seconds`, in a fresh directory.
ZipRunResult run_zip(std::uint64_t seed, double seconds, int writers, const std::string& self_exe);
// A child (zarrpp-sim --zip-child ...): returns its exit status.
int zip_child(const std::vector<std::string>& args);

}  // namespace zarrpp::sim
