#pragma once
// The store conformance suite: every store behaves the same for everything it can do. Each test
// binary instantiates it with factories for its stores (memory and file in zarrpp-tests, S3 over
// moto in zarrpp-remote-tests):
//   INSTANTIATE_TEST_SUITE_P(Stores, StoreConformance, ::testing::Values(StoreFactory{...}), name_of);
#include <functional>
#include <ostream>
#include <string>

#include "common.hpp"

namespace zarrpp::test {

struct StoreFactory {
  std::string name;
  std::function<StorePtr()> make;  // a fresh, empty store each time
  int slowness = 1;                // remote stores: loops of the concurrency tests run 1/slowness as often
};
inline std::ostream& operator<<(std::ostream& o, const StoreFactory& f) { return o << f.name; }
inline std::string name_of(const ::testing::TestParamInfo<StoreFactory>& info) { return info.param.name; }

class StoreConformance : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override { store = GetParam().make(); }
  StorePtr store;
};

}  // namespace zarrpp::test
