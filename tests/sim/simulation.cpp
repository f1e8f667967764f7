#include "simulation.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "model.hpp"
#include "sim_time.hpp"
#include "zarrpp/zarrpp.hpp"

namespace zarrpp::sim {

namespace {

const char* kActorNames[] = {"writer", "grower", "attributes", "reader", "consolidator"};

std::vector<ArrayGeometry> geometries() {
  ArrayGeometry a;
  a.path = "a";
  ArrayGeometry s;
  s.path = "s";
  s.chunk[0] = 2;
  s.chunk[1] = 4;
  s.shard[0] = 4;
  s.shard[1] = 8;
  return {a, s};
}

// Everything the actors of one run share.
struct World {
  const RunConfig& config;
  SimTime time;
  ObjectServer server;
  Model model;
  FaultCounts counts;
  std::vector<ArrayGeometry> arrays = geometries();
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> transports{0};
  std::mutex result_mu;
  RunResult result;

  explicit World(const RunConfig& c) : config(c), time(c.seed, c.time_scale), server(c.server), model(geometries()) {
    server.observe([this](const Change& ch) { model.on_change(ch); });
  }

  StorePtr store(bool faults) {
    // The lease's documented limit (a holder paused past lock_ttl) is kept out of the schedule:
    // four simulated hours (7 real seconds at the default scale), while a holder holds for
    // milliseconds; a lease left behind (its release failed) keeps others waiting that long.
    const auto ttl = std::chrono::hours(4);
    RemoteOptions net;
    net.max_attempts = 6;
    FaultPlan plan = config.faults;
    if (!faults) plan.rate = 0, plan.max_list_lag = 0;
    const std::uint64_t seed = mix(config.seed * 1000003 + transports.fetch_add(1));
    detail::set_transport_factory(
        [this, plan, seed] { return std::make_shared<FaultTransport>(server, time, counts, plan, seed); });
    StorePtr s;
    if (config.service == "azure") {
      AzureStore::Options o;
      o.container = ObjectServer::kBucket;
      o.account_name = "sim";
      o.endpoint = "http://sim.invalid";
      o.anonymous = true;
      o.lock_ttl = ttl;
      o.net = net;
      s = AzureStore::open(o);
    } else {
      S3Store::Options o;
      o.bucket = ObjectServer::kBucket;
      o.endpoint = "http://sim.invalid";
      o.region = "us-east-1";
      o.anonymous = true;
      o.lock_ttl = ttl;
      o.net = net;
      s = S3Store::open(o);
    }
    detail::set_transport_factory(nullptr);
    return s;
  }

  // Runs one operation under the model: registered before it starts, its outcome recorded after.
  template <class Body>
  void operation(ActorKind kind, OpRecord rec, Body&& body) {
    const std::uint64_t id = model.begin(std::move(rec), server.seq());
    current_op() = id;
    bool ok = true, uncertain = false;
    std::string error;
    try {
      body(id);
    } catch (const UncertainWriteError& e) {
      ok = false, uncertain = true, error = e.what();
    } catch (const std::exception& e) {
      ok = false, error = e.what();
    }
    current_op() = 0;
    model.end(id, server.seq(), ok, error, uncertain);
    std::lock_guard lk(result_mu);
    ++result.ops;
    ++result.ops_by_kind[static_cast<std::size_t>(kind)];
    if (ok) ++result.ok_by_kind[static_cast<std::size_t>(kind)];
    (ok ? result.ops_ok : result.ops_failed)++;
    if (uncertain) ++result.ops_uncertain;
    if (!ok && result.sample_errors.size() < 12 && result.ops_failed % 97 == 1)
      result.sample_errors.push_back(std::string(actor_name(kind)) + ": " + error);
  }
};

OpRecord record(OpKind kind, int array) {
  OpRecord r;
  r.kind = kind;
  r.array = array;
  return r;
}

std::int64_t pick(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {  // [lo, hi]
  return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

std::vector<std::int64_t> distinct(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi, std::size_t n) {
  std::vector<std::int64_t> out;
  while (out.size() < n && out.size() < static_cast<std::size_t>(hi - lo)) {
    const auto v = pick(rng, lo, hi - 1);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

class Actor {
 public:
  Actor(World& w, int index, ActorKind role, bool stale)
      : w_(w),
        role_(role),
        stale_(stale),
        rng_(mix(w.config.seed * 7919 + static_cast<std::uint64_t>(index))),
        name_(std::to_string(index)),
        store_(w.store(true)) {}

  void run() {
    while (!w_.stop.load()) step();
  }

 private:
  std::optional<Array>& handle(int a) {
    auto& h = handles_[static_cast<std::size_t>(a)];
    // A fresh view most of the time; a stale writer keeps its handle for long.
    if (!h || rng_() % (stale_ ? 50 : 2) == 0) {
      try {
        h = Array::open(store_, w_.arrays[static_cast<std::size_t>(a)].path);
      } catch (const std::exception&) {
        h.reset();  // could not even read zarr.json through the faults: try again next step
      }
    }
    return h;
  }

  void step() {
    const int a = static_cast<int>(rng_() % 2);
    ActorKind kind = role_;
    if (role_ == ActorKind::attributes && rng_() % 4 == 0) kind = ActorKind::consolidator;
    if (role_ == ActorKind::grower && rng_() % 5 == 0) kind = ActorKind::attributes;  // racing updates
    if (kind == ActorKind::reader) return read(a);
    if (kind == ActorKind::consolidator) {
      w_.operation(kind, record(OpKind::consolidate, -1),
                   [&](std::uint64_t) { Group::open(store_).consolidate_metadata(); });
      return;
    }
    auto& h = handle(a);
    if (!h) return;
    if (kind == ActorKind::writer) return write(a, *h);
    if (kind == ActorKind::grower) return grow(a, *h);
    OpRecord rec = record(OpKind::attrs, a);
    rec.attr_key = "k" + name_;
    w_.operation(kind, rec, [&](std::uint64_t id) { h->update_attributes({{"k" + name_, id}}); });
  }

  void write(int a, Array& h) {
    const ArrayGeometry& g = w_.arrays[static_cast<std::size_t>(a)];
    const Domain d = h.domain();
    const std::int64_t lo = d[0].inclusive_min, hi = d[0].exclusive_max, width = g.width;
    if (hi - lo < 1) return;
    OpRecord rec = record(OpKind::write, a);
    auto cover = [&](const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& cols) {
      for (auto r : rows)
        for (auto c : cols) rec.cover.insert(pack(r, c));
    };
    auto range = [](std::int64_t from, std::int64_t to) {
      std::vector<std::int64_t> v;
      for (auto i = from; i < to; ++i) v.push_back(i);
      return v;
    };
    std::int32_t value = 0;
    const NDView scalar = NDView::c_order(&value, DataType::int32, {});
    switch (rng_() % 6) {
      case 0: {  // a box of slices
        const auto r0 = pick(rng_, lo, hi - 1), h0 = pick(rng_, 1, std::min<std::int64_t>(6, hi - r0));
        const auto c0 = pick(rng_, 0, width - 1), w0 = pick(rng_, 1, width - c0);
        cover(range(r0, r0 + h0), range(c0, c0 + w0));
        const Selection sel{slice(r0, r0 + h0), slice(c0, c0 + w0)};
        return w_.operation(ActorKind::writer, rec, [&](std::uint64_t id) {
          value = static_cast<std::int32_t>(id);
          h.coords().write(sel, scalar);
        });
      }
      case 1: {  // orthogonal index arrays, in any order
        const auto rows = distinct(rng_, lo, hi, static_cast<std::size_t>(pick(rng_, 1, 4)));
        const auto cols = distinct(rng_, 0, width, static_cast<std::size_t>(pick(rng_, 1, 4)));
        cover(rows, cols);
        const Selection sel{IndexArray(rows), IndexArray(cols)};
        return w_.operation(ActorKind::writer, rec, [&](std::uint64_t id) {
          value = static_cast<std::int32_t>(id);
          h.coords().write(sel, scalar);
        });
      }
      case 2: {  // a boolean mask per dimension
        BoolArray rm(static_cast<std::size_t>(hi - lo)), cm(static_cast<std::size_t>(width));
        std::vector<std::int64_t> rows, cols;
        for (std::size_t i = 0; i < rm.size(); ++i) {
          rm[i] = rng_() % 5 == 0;
          if (rm[i]) rows.push_back(lo + static_cast<std::int64_t>(i));
        }
        for (std::size_t i = 0; i < cm.size(); ++i) {
          cm[i] = rng_() % 3 == 0;
          if (cm[i]) cols.push_back(static_cast<std::int64_t>(i));
        }
        cover(rows, cols);
        const Selection sel{rm, cm};
        return w_.operation(ActorKind::writer, rec, [&](std::uint64_t id) {
          value = static_cast<std::int32_t>(id);
          h.coords().write(sel, scalar);
        });
      }
      case 3: {  // points (vindex)
        IndexPlan plan;
        plan.kind = IndexPlan::Kind::points;
        plan.coords = true;
        plan.points = {{}, {}};
        std::unordered_set<std::uint64_t> seen;
        for (int i = 0, n = static_cast<int>(pick(rng_, 1, 6)); i < n; ++i) {
          const auto r = pick(rng_, lo, hi - 1), c = pick(rng_, 0, width - 1);
          if (!seen.insert(pack(r, c)).second) continue;
          plan.points[0].push_back(r);
          plan.points[1].push_back(c);
        }
        rec.cover = seen;
        plan.shape = {static_cast<std::int64_t>(plan.points[0].size())};
        return w_.operation(ActorKind::writer, rec, [&](std::uint64_t id) {
          h.write(plan, NDArray::full<std::int32_t>(plan.shape, static_cast<std::int32_t>(id)));
        });
      }
      case 4: {  // one element
        const auto r = pick(rng_, lo, hi - 1), c = pick(rng_, 0, width - 1);
        cover({r}, {c});
        const Selection sel{r, c};
        return w_.operation(ActorKind::writer, rec, [&](std::uint64_t id) {
          value = static_cast<std::int32_t>(id);
          h.coords().write(sel, scalar);
        });
      }
      default: {  // whole objects, aligned (written without reading them first)
        const std::int64_t rows = g.object_rows();
        std::int64_t r0 = (lo >= 0 ? (lo + rows - 1) / rows : -(-lo / rows)) * rows;  // the first aligned row
        if (r0 + rows > hi) return;
        r0 += rows * pick(rng_, 0, std::max<std::int64_t>(0, (hi - r0) / rows - 1));
        if (r0 + rows > hi) return;
        cover(range(r0, r0 + rows), range(0, width));
        const Selection sel{slice(r0, r0 + rows), slice(0, width)};
        return w_.operation(ActorKind::writer, rec, [&](std::uint64_t id) {
          value = static_cast<std::int32_t>(id);
          h.coords().write(sel, scalar);
        });
      }
    }
  }

  void grow(int a, Array& h) {
    const ArrayGeometry& g = w_.arrays[static_cast<std::size_t>(a)];
    const Domain d = h.domain();
    const std::int64_t extent = d[0].exclusive_max - d[0].inclusive_min;
    const std::int64_t k = pick(rng_, 1, 5);
    OpRecord rec = record(OpKind::grow, a);
    // Grow while small, shrink while large, either way in between.
    const bool shrink = extent > 40 || (extent > 12 && rng_() % 3 == 0);
    const bool front = rng_() % 2 == 0;
    if (shrink) {
      (front ? rec.lower_change : rec.upper_change) = front ? k : -k;
      return w_.operation(ActorKind::grower, rec,
                          [&](std::uint64_t) { h.expand_domain(0, front ? -k : 0, front ? 0 : -k); });
    }
    (front ? rec.lower_change : rec.upper_change) = front ? -k : k;
    if (rng_() % 2) {
      return w_.operation(ActorKind::grower, rec,
                          [&](std::uint64_t) { h.expand_domain(0, front ? k : 0, front ? 0 : k); });
    }
    rec.grow_has_data = true;
    w_.operation(ActorKind::grower, rec, [&](std::uint64_t id) {
      const auto data = NDArray::full<std::int32_t>({k, g.width}, static_cast<std::int32_t>(id));
      if (front)
        h.prepend(data);
      else
        h.append(data);
    });
  }

  void read(int a) {
    const ArrayGeometry& g = w_.arrays[static_cast<std::size_t>(a)];
    std::int64_t lo = 0, hi = 0, from = 0, to = 0;
    std::vector<std::int32_t> values;
    std::uint64_t op = 0;
    bool read_all = false;
    w_.operation(ActorKind::reader, record(OpKind::read, a), [&](std::uint64_t id) {
      op = id;
      const Array fresh = Array::open(store_, g.path);
      const Domain d = fresh.domain();
      lo = d[0].inclusive_min, hi = d[0].exclusive_max;
      from = lo, to = hi;
      // Half the reads take a few rows (partial reads of shards: ranged GETs), half the domain.
      if (hi - lo > 1 && rng_() % 2) {
        from = pick(rng_, lo, hi - 1);
        to = pick(rng_, from + 1, std::min(hi, from + 6));
      }
      const NDArray got = fresh.coords().read({slice(from, to)});
      values.assign(got.data<std::int32_t>(), got.data<std::int32_t>() + (to - from) * g.width);
      read_all = true;
    });
    if (read_all) w_.model.check_read(op, a, lo, hi, from, to, values);
  }

  World& w_;
  ActorKind role_;
  bool stale_;
  std::mt19937_64 rng_;
  std::string name_;
  StorePtr store_;
  std::array<std::optional<Array>, 2> handles_;
};

void setup(World& w) {
  auto store = w.store(false);
  w.operation(ActorKind::writer, record(OpKind::setup, -1), [&](std::uint64_t) {
    Group::create(store);
    Array::create(store, "a",
                  ArraySpec{.shape = {12, 8},
                            .chunks = {4, 4},
                            .dtype = DataType::int32,
                            .codecs = std::vector<codec::Any>{codec::BytesCodec{}},
                            .lower_bound = Shape{-4, 0},
                            .origin = Shape{0, 0}});
    Array::create(store, "s",
                  ArraySpec{.shape = {12, 8},
                            .chunks = {2, 4},
                            .dtype = DataType::int32,
                            .shards = Shape{4, 8},
                            .lower_bound = Shape{-4, 0},
                            .origin = Shape{0, 0}});
  });
}

}  // namespace

const char* actor_name(ActorKind k) { return kActorNames[static_cast<std::size_t>(k)]; }

RunResult run(const RunConfig& config) {
  RunConfig c = config;
  c.server.conditional_put = c.variant != "no-conditional";
  c.server.conditional_delete = c.variant == "full";
  c.server.azure = c.service == "azure";
  // 409 ConditionalRequestConflict is S3's, from a server that honours conditions.
  c.faults.conflicts = c.server.conditional_put && !c.server.azure;
  World w(c);
  // Warnings (a consolidated-metadata refresh that failed) are counted, not printed.
  std::atomic<std::uint64_t> warnings{0};
  const auto previous = set_warning_handler([&warnings](const std::string&) { warnings.fetch_add(1); });
  {
    SimTimeScope scope(w.time);
    setup(w);
    {
      std::lock_guard lk(w.result_mu);
      w.result = RunResult{};
    }
    static const ActorKind roles[] = {ActorKind::writer,     ActorKind::writer, ActorKind::grower, ActorKind::reader,
                                      ActorKind::attributes, ActorKind::grower, ActorKind::writer, ActorKind::reader};
    std::vector<std::unique_ptr<Actor>> actors;
    for (int i = 0; i < c.actors; ++i) actors.push_back(std::make_unique<Actor>(w, i, roles[i % 8], i == 1));
    std::vector<std::thread> threads;
    for (auto& a : actors) threads.emplace_back([&a] { a->run(); });
    std::this_thread::sleep_for(std::chrono::duration<double>(c.seconds));
    w.stop = true;
    for (auto& t : threads) t.join();
    actors.clear();
  }
  set_warning_handler(previous);
  RunResult r = w.result;
  r.warnings = warnings.load();
  for (std::size_t i = 0; i < r.faults.size(); ++i) r.faults[i] = w.counts.by_kind[i].load();
  r.requests = w.counts.requests.load();
  r.lost_conditional_put_replies = w.counts.lost_conditional_put_replies.load();
  r.list_lags = w.counts.list_lags.load();
  r.changes = w.model.changes();
  r.unverifiable = w.model.unverifiable_reads();
  r.violation_count = w.model.violation_count();
  r.violations = w.model.violations();
  r.simulated_seconds = std::chrono::duration<double>(w.time.elapsed()).count();
  return r;
}

}  // namespace zarrpp::sim
