// A conditional write that lost its race may still have landed: found by the simulated object
// store (tests/sim). Over a network a conditional PUT's answer can be lost; the store then reads
// back, and when another writer's value is there already it cannot tell whether its own landed
// first. A write or attribute update that then fails must not claim its change was not made.
#include <gtest/gtest.h>

#include "support.hpp"

using namespace zarrpp;

namespace {

// On the first conditional set of `key`, lets it land, then lets "another writer" change the value
// (`other`), and answers "refused", as a lost answer read back after the other writer's change
// is decided. Every later read of `key` fails (the network is gone).
class SupersedingStore : public StoreWrapper {
 public:
  SupersedingStore(StorePtr inner, std::string key, std::function<Bytes(const Bytes&)> other)
      : StoreWrapper(std::move(inner)), key_(std::move(key)), other_(std::move(other)) {}
  StoreCapabilities capabilities() const override {
    auto c = StoreWrapper::capabilities();
    c.uncertain_writes = true;
    return c;
  }
  std::string describe() const override { return "superseding(" + inner()->describe() + ")"; }

 protected:
  std::optional<VersionedBytes> do_get(const std::string& k, const ByteRange& r, std::uint64_t max_bytes) override {
    if (k == key_ && superseded_) throw StoreError("simulated: the network is gone");
    return StoreWrapper::do_get(k, r, max_bytes);
  }
  bool do_set_if(const std::string& k, const Bytes& value, const std::optional<Version>& expected) override {
    if (k != key_ || superseded_) return StoreWrapper::do_set_if(k, value, expected);
    if (!StoreWrapper::do_set_if(k, value, expected)) return false;
    inner()->set(k, other_(value));
    superseded_ = true;
    return false;
  }

 private:
  std::string key_;
  std::function<Bytes(const Bytes&)> other_;
  bool superseded_ = false;
};

Array make_array(const StorePtr& store) {
  return Array::create(store, "x",
                       ArraySpec{.shape = {8},
                                 .chunks = {4},
                                 .dtype = DataType::int32,
                                 .codecs = std::vector<codec::Any>{codec::BytesCodec{}}});
}

}  // namespace

TEST(LostRaces, AChunkWriteThatLostItsRaceAndFailedSaysTheChunkMayHoldIt) {
  auto mem = std::make_shared<MemoryStore>();
  make_array(mem);
  // The other writer sets element 3 of the chunk, keeping ours (it read our version).
  auto store = std::make_shared<SupersedingStore>(mem, "x/c/0", [](const Bytes& b) {
    Bytes o = b;
    o[12] = 9;
    return o;
  });
  auto a = Array::open(store, "x");
  try {
    a.write_scalar<std::int32_t>(Selection{slice(0, 2)}, 7);
    FAIL() << "the write should fail";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("1 more may hold it"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("the others are unchanged") < std::string(e.what()).find("may hold"), false)
        << e.what();
  }
  // It did land: the chunk holds the write.
  const auto now = Array::open(mem, "x").read({slice(0, 4)});
  EXPECT_EQ(now.at<std::int32_t>({0}), 7);
  EXPECT_EQ(now.at<std::int32_t>({3}), 9);
}

TEST(LostRaces, AnAttributeUpdateThatLostItsRaceAndFailedSaysItMayHaveTakenEffect) {
  auto mem = std::make_shared<MemoryStore>();
  make_array(mem);
  // The other writer adds an attribute to the document that holds ours.
  auto store = std::make_shared<SupersedingStore>(mem, "x/zarr.json", [](const Bytes& b) {
    auto j = nlohmann::json::parse(b.begin(), b.end());
    j["attributes"]["other"] = 1;
    const std::string s = j.dump();
    return Bytes(s.begin(), s.end());
  });
  auto a = Array::open(store, "x");
  try {
    a.update_attributes({{"mine", 1}});
    FAIL() << "the update should fail";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("may have taken effect"), std::string::npos) << e.what();
  }
  EXPECT_EQ(Array::open(mem, "x").attributes().value("mine", 0), 1);
}
