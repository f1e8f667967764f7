#pragma once
// One simulated run: the object server, the model, simulated time and seeded actors, each with a
// store client of its own (another process's view of the store), for a given time.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fault_transport.hpp"
#include "object_server.hpp"

namespace zarrpp::sim {

struct RunConfig {
  std::uint64_t seed = 1;
  double seconds = 10;  // real time the actors run
  int actors = 6;
  double time_scale = 2000;  // simulated seconds per real second
  FaultPlan faults{};
  ServerOptions server{};
  std::string variant = "full";  // full, no-conditional-delete, no-conditional
  std::string service = "s3";    // s3, azure: the store and the server's dialect
};

enum class ActorKind { writer, grower, attributes, reader, consolidator, count };
const char* actor_name(ActorKind k);

struct RunResult {
  std::uint64_t ops = 0, ops_ok = 0, ops_failed = 0, ops_uncertain = 0;
  std::array<std::uint64_t, static_cast<std::size_t>(ActorKind::count)> ops_by_kind{}, ok_by_kind{};
  std::array<std::uint64_t, static_cast<std::size_t>(Fault::count)> faults{};
  std::uint64_t requests = 0, lost_conditional_put_replies = 0, list_lags = 0, changes = 0, unverifiable = 0,
                warnings = 0;
  std::uint64_t violation_count = 0;
  std::vector<std::string> violations;
  std::vector<std::string> sample_errors;  // a few of the operations' errors, to show what they say
  double simulated_seconds = 0;
  std::uint64_t faults_total() const {
    std::uint64_t n = 0;
    for (auto f : faults) n += f;
    return n;
  }
};

RunResult run(const RunConfig& config);

}  // namespace zarrpp::sim
