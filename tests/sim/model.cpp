#include "model.hpp"

#include <algorithm>
#include <cstring>
#include <regex>

namespace zarrpp::sim {

namespace {

constexpr std::size_t kKeepVersions = 24;      // per chunk object, for checking reads
constexpr std::size_t kKeepMeta = 4096;        // per array's zarr.json
constexpr std::size_t kKeepViolations = 50;    // described; more are counted
constexpr std::uint64_t kPruneAfter = 200000;  // changes after an operation ended

struct Doc {
  std::int64_t lower = 0, upper = 0;
  nlohmann::json attributes, rest;
};

// An array document's first row: a regular_bounded grid's lower bound; a growth whose domain and
// origin both come to 0 writes a plain regular grid (domain_change.cpp), whose first row is 0.
std::int64_t lower_of(const nlohmann::json& doc) {
  const auto& grid = doc.at("chunk_grid");
  if (grid.at("name") == "regular") return 0;
  return grid.at("configuration").at("lower_bound").at(0).get<std::int64_t>();
}

Doc parse_doc(const Bytes& b) {
  auto j = nlohmann::json::parse(b.begin(), b.end());
  Doc d;
  d.lower = lower_of(j);
  d.upper = d.lower + j.at("shape").at(0).get<std::int64_t>();
  d.attributes = j.value("attributes", nlohmann::json::object());
  // The grid as regular_bounded whatever it is spelled as (a regular grid's origin is 0): its chunk
  // shape and origin are what must not change.
  auto& grid = j.at("chunk_grid");
  if (grid.at("name") == "regular") grid["configuration"]["origin"] = nlohmann::json::array({0, 0});
  grid["name"] = "regular_bounded";
  grid["configuration"].erase("lower_bound");
  j.erase("shape");
  j.erase("attributes");
  d.rest = std::move(j);
  return d;
}

std::size_t doc_hash(const std::string& path, std::int64_t lower, std::int64_t upper,
                     const nlohmann::json& attributes) {
  return std::hash<std::string>{}(path + ":" + std::to_string(lower) + "," + std::to_string(upper) + "," +
                                  attributes.dump());
}

// a / b rounded down (chunk numbers of negative rows).
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

std::uint64_t u64(const Bytes& b, std::size_t at) {
  std::uint64_t v = 0;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

}  // namespace

std::uint64_t pack(std::int64_t row, std::int64_t col) {
  return (static_cast<std::uint64_t>(row + (std::int64_t{1} << 31)) << 32) | static_cast<std::uint32_t>(col);
}

std::string Model::describe_op(std::uint64_t id) {
  const OpRecord* o = op(id);
  if (!o) return "op " + std::to_string(id);
  static const char* kinds[] = {"setup", "write", "grow", "attrs", "read", "consolidate"};
  return "op " + std::to_string(id) + ", " + kinds[static_cast<int>(o->kind)] + " " + std::to_string(o->lower_change) +
         "/" + std::to_string(o->upper_change) + (o->grow_has_data ? " with data" : "") + ", started #" +
         std::to_string(o->start) +
         (o->done ? ", ended #" + std::to_string(o->end) + ": " + (o->ok ? "ok" : o->error) : ", running");
}

void Model::violate(std::string what) {
  ++violation_count_;
  if (violations_.size() < kKeepViolations) violations_.push_back(std::move(what));
}

OpRecord* Model::op(std::uint64_t id) {
  const auto it = ops_.find(id);
  return it == ops_.end() ? nullptr : &it->second;
}

std::uint64_t Model::begin(OpRecord rec, std::uint64_t store_seq) {
  std::lock_guard lk(mu_);
  const std::uint64_t id = next_id_++;
  rec.start = store_seq;
  ops_.emplace(id, std::move(rec));
  return id;
}

int Model::array_of_metadata(const std::string& key) const {
  for (std::size_t i = 0; i < arrays_.size(); ++i)
    if (key == arrays_[i].path + "/zarr.json") return static_cast<int>(i);
  return -1;
}

std::optional<Model::ObjectRef> Model::object_of(const std::string& key) const {
  for (std::size_t i = 0; i < arrays_.size(); ++i) {
    const std::string p = arrays_[i].path + "/c/";
    if (key.rfind(p, 0) != 0) continue;
    const auto slash = key.find('/', p.size());
    if (slash == std::string::npos) return std::nullopt;
    const std::int64_t r = std::stoll(key.substr(p.size(), slash - p.size()));
    const std::int64_t c = std::stoll(key.substr(slash + 1));
    return ObjectRef{static_cast<int>(i), r * arrays_[i].object_rows(), c * arrays_[i].object_cols()};
  }
  return std::nullopt;
}

std::vector<std::int32_t> Model::decode(const ArrayGeometry& g, const std::optional<Bytes>& b, std::string& err) const {
  const std::int64_t rows = g.object_rows(), cols = g.object_cols();
  std::vector<std::int32_t> out(static_cast<std::size_t>(rows * cols), 0);
  if (!b) return out;
  if (!g.shard[0]) {
    if (b->size() != out.size() * 4) {
      err = "a chunk of " + std::to_string(b->size()) + " bytes";
      return out;
    }
    std::memcpy(out.data(), b->data(), b->size());
    return out;
  }
  const std::int64_t ir = rows / g.chunk[0], ic = cols / g.chunk[1], n = ir * ic;
  const std::size_t index = static_cast<std::size_t>(n) * 16 + 4,
                    inner = static_cast<std::size_t>(g.chunk[0] * g.chunk[1]) * 4;
  if (b->size() < index) {
    err = "a shard of " + std::to_string(b->size()) + " bytes";
    return out;
  }
  const std::size_t at = b->size() - index;
  for (std::int64_t k = 0; k < n; ++k) {
    const std::uint64_t off = u64(*b, at + static_cast<std::size_t>(k) * 16),
                        len = u64(*b, at + static_cast<std::size_t>(k) * 16 + 8);
    if (off == ~std::uint64_t{0}) continue;
    if (len != inner || off + len > at) {
      err = "a shard whose index is wrong";
      return out;
    }
    const std::int64_t r0 = (k / ic) * g.chunk[0], c0 = (k % ic) * g.chunk[1];
    for (std::int64_t r = 0; r < g.chunk[0]; ++r)
      std::memcpy(&out[static_cast<std::size_t>((r0 + r) * cols + c0)],
                  b->data() + off + static_cast<std::size_t>(r * g.chunk[1]) * 4,
                  static_cast<std::size_t>(g.chunk[1]) * 4);
  }
  return out;
}

void Model::on_change(const Change& c) {
  std::lock_guard lk(mu_);
  ++changes_;
  try {
    check_change(c);
  } catch (const std::exception& e) {
    violate(c.key + " change #" + std::to_string(c.seq) + " could not be checked: " + e.what());
  }
}

void Model::check_change(const Change& c) {
  if (const int a = array_of_metadata(c.key); a >= 0) return on_metadata(a, c);
  if (c.key == "zarr.json") return on_group(c);
  if (const auto ref = object_of(c.key)) return on_object(*ref, c);
}

// Whether `row` lies in the array's domain as its zarr.json stated it `back` versions ago.
bool Model::in_domain(int array, std::int64_t row, std::size_t back) const {
  const auto& m = meta_[static_cast<std::size_t>(array)];
  if (m.size() <= back) return false;
  const auto& v = m[m.size() - 1 - back];
  return row >= v.lower && row < v.upper;
}

void Model::on_metadata(int array, const Change& c) {
  if (meta_.size() < arrays_.size()) meta_.resize(arrays_.size());
  auto& versions = meta_[static_cast<std::size_t>(array)];
  const std::string& name = arrays_[static_cast<std::size_t>(array)].path;
  OpRecord* o = op(c.op);
  if (!c.after) return violate(name + "/zarr.json was deleted (op " + std::to_string(c.op) + ")");
  Doc after;
  try {
    after = parse_doc(*c.after);
  } catch (const std::exception& e) {
    return violate(name + "/zarr.json stored unreadable: " + e.what());
  }
  auto record = [&] {
    versions.push_back({c.seq, after.lower, after.upper});
    if (versions.size() > kKeepMeta) versions.pop_front();
    seen_docs_.insert(doc_hash(name, after.lower, after.upper, after.attributes));
  };
  if (!c.before) {
    if (!o || o->kind != OpKind::setup) violate(name + "/zarr.json created by op " + std::to_string(c.op));
    return record();
  }
  const Doc before = parse_doc(*c.before);
  const std::string what = name + "/zarr.json change #" + std::to_string(c.seq) + " by op " + std::to_string(c.op);
  if (after.rest != before.rest) violate(what + " changed more than its domain and attributes");
  if (!o) {
    violate(what + ": no operation of the run made it");
    return record();
  }
  if (o->done && (o->ok || !o->uncertain))
    violate(what + ": the operation had returned (" + (o->ok ? "done" : o->error) + ")");
  ++o->transitions;
  if (o->kind == OpKind::grow) {
    if (after.lower != before.lower + o->lower_change || after.upper != before.upper + o->upper_change)
      violate(what + ": rows [" + std::to_string(before.lower) + ", " + std::to_string(before.upper) + ") became [" +
              std::to_string(after.lower) + ", " + std::to_string(after.upper) + "), not by " +
              std::to_string(o->lower_change) + "/" + std::to_string(o->upper_change));
    if (after.attributes != before.attributes) violate(what + ": a growth changed the attributes");
    if (o->transitions > 1) violate(what + ": the growth was applied " + std::to_string(o->transitions) + " times");
    check_entering_rows(array, *o, c.op, after.lower, std::min(before.lower, after.upper));
    check_entering_rows(array, *o, c.op, std::max(before.upper, after.lower), after.upper);
  } else if (o->kind == OpKind::attrs) {
    nlohmann::json expect = before.attributes;
    expect[o->attr_key] = c.op;
    if (after.lower != before.lower || after.upper != before.upper || after.attributes != expect)
      violate(what + ": an attribute update made " + after.attributes.dump() + " of " + before.attributes.dump());
  } else {
    violate(what + ": an operation that does not change metadata changed it");
  }
  record();
}

// The value the latest stored version of its object holds at (row, col) (0: never stored).
std::int32_t Model::stored_value(int array, std::int64_t row, std::int64_t col) const {
  const ArrayGeometry& g = arrays_[static_cast<std::size_t>(array)];
  const std::int64_t orow = floor_div(row, g.object_rows()), ocol = col / g.object_cols();
  const auto it = objects_.find(g.path + "/c/" + std::to_string(orow) + "/" + std::to_string(ocol));
  if (it == objects_.end() || it->second.empty()) return 0;
  return it->second.back().values[static_cast<std::size_t>((row - orow * g.object_rows()) * g.object_cols() +
                                                           (col - ocol * g.object_cols()))];
}

// Rows [from, to) a growth brings into the domain hold its data (its id) or, without data, the fill
// value — or what a write still under way (a writer whose view is older) put there.
void Model::check_entering_rows(int array, const OpRecord& grow, std::uint64_t id, std::int64_t from, std::int64_t to) {
  const ArrayGeometry& g = arrays_[static_cast<std::size_t>(array)];
  const std::int32_t expect = grow.grow_has_data ? static_cast<std::int32_t>(id) : 0;
  for (std::int64_t r = from; r < to; ++r)
    for (std::int64_t c = 0; c < g.width; ++c) {
      const std::int32_t v = stored_value(array, r, c);
      if (v == expect) continue;
      const OpRecord* w = op(static_cast<std::uint64_t>(v));
      if (w && w->kind == OpKind::write && (!w->done || w->end >= grow.start)) continue;
      return violate(g.path + ": row " + std::to_string(r) + " entering the domain with op " + std::to_string(id) +
                     " holds " + std::to_string(v) + ", not " + std::to_string(expect));
    }
}

void Model::on_group(const Change& c) {
  if (!c.after) return violate("the group's zarr.json was deleted");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(c.after->begin(), c.after->end());
  } catch (const std::exception& e) {
    return violate(std::string("the group's zarr.json stored unreadable: ") + e.what());
  }
  if (!j.contains("consolidated_metadata") || j["consolidated_metadata"].is_null()) return;
  for (const auto& [name, doc] : j["consolidated_metadata"]["metadata"].items()) {
    if (doc.value("node_type", "") != "array") continue;
    const std::int64_t lower = lower_of(doc);
    const std::int64_t upper = lower + doc["shape"][0].get<std::int64_t>();
    if (!seen_docs_.count(doc_hash(name, lower, upper, doc.value("attributes", nlohmann::json::object()))))
      violate("consolidated metadata (change #" + std::to_string(c.seq) + ") holds a document of '" + name +
              "' that was never stored: rows [" + std::to_string(lower) + ", " + std::to_string(upper) + ")");
  }
}

namespace {
// Whether the write covers every element of the object whose first element is (row, col).
bool covers_all(const OpRecord& o, std::int64_t row, std::int64_t col, const ArrayGeometry& g) {
  for (std::int64_t r = 0; r < g.object_rows(); ++r)
    for (std::int64_t c = 0; c < g.object_cols(); ++c)
      if (!o.cover.count(pack(row + r, col + c))) return false;
  return true;
}
}  // namespace

template <class H>
std::string debug_history(const H& hist, const Change& c, const OpRecord& o, std::size_t n) {
  std::string out = " [request op " + std::to_string(c.op) + ", " + std::to_string(n) + " elements; writer start " +
                    std::to_string(o.start) + " done " + std::to_string(o.done) + "; versions:";
  for (std::size_t i = hist.size() > 6 ? hist.size() - 6 : 0; i < hist.size(); ++i)
    out += " #" + std::to_string(hist[i].seq) + " by " + std::to_string(hist[i].writer);
  return out + "]";
}

void Model::on_object(const ObjectRef& ref, const Change& c) {
  const ArrayGeometry& g = arrays_[static_cast<std::size_t>(ref.array)];
  std::string err;
  const auto before = decode(g, c.before, err);
  const auto after = decode(g, c.after, err);
  const std::string what = c.key + " change #" + std::to_string(c.seq);
  if (!err.empty()) violate(what + ": " + err);
  auto& hist = objects_[c.key];
  const std::uint64_t previous_writer = hist.empty() ? 0 : hist.back().writer;
  hist.push_back({c.seq, after, 0});
  if (hist.size() > kKeepVersions) hist.pop_front();
  const std::int64_t cols = g.object_cols();
  std::set<std::int32_t> values;
  std::vector<std::size_t> changed;
  for (std::size_t i = 0; i < after.size(); ++i)
    if (after[i] != before[i]) {
      changed.push_back(i);
      values.insert(after[i]);
    }
  if (changed.empty()) {
    hist.back().writer = previous_writer;  // the same values again (a re-sent write)
    return;
  }
  if (values.size() > 1) {
    std::string v;
    for (auto x : values) v += " " + std::to_string(x);
    return violate(what + " sets elements to several operations' values at once:" + v);
  }
  const std::int32_t w = *values.begin();
  hist.back().writer = static_cast<std::uint64_t>(w);
  if (w == 0) {
    // Cleared: only elements outside the domain (as stored now or just before) may be.
    for (const auto i : changed) {
      const std::int64_t row = ref.row + static_cast<std::int64_t>(i) / cols;
      if (in_domain(ref.array, row, 0) && in_domain(ref.array, row, 1))
        return violate(what + " cleared row " + std::to_string(row) + ", inside the domain (" + describe_op(c.op) +
                       "; " + (c.after ? "rewritten" : "deleted") + ")");
    }
    return;
  }
  OpRecord* o = op(static_cast<std::uint64_t>(w));
  if (!o) return violate(what + " wrote value " + std::to_string(w) + ", of no operation still known");
  if (o->done && (o->ok || !o->uncertain))
    violate(what + " wrote op " + std::to_string(w) + "'s value after it returned (" + (o->ok ? "done" : o->error) +
            ")");
  // A partial write applied again on top of another writer's change (which may have built on its
  // first copy): its change counted twice. Not counted: a whole-object write re-sent after a lost
  // answer (plain PUTs are last-writer-wins); a write landing again outside the domain; a create
  // (If-None-Match: *) re-sent after a lost answer landing again where its first copy was deleted
  // meanwhile (a shrink's clean-up, the rows brought back without data): it replaces no data.
  const bool inside = std::any_of(changed.begin(), changed.end(), [&](std::size_t i) {
    return in_domain(ref.array, ref.row + static_cast<std::int64_t>(i) / cols, 0);
  });
  if (o->kind == OpKind::write && inside && c.before && o->objects.count(c.key) &&
      previous_writer != static_cast<std::uint64_t>(w) && !covers_all(*o, ref.row, ref.col, g))
    violate(what + ": op " + std::to_string(w) + " changed it again after op " + std::to_string(previous_writer) +
            " had: a partial write applied twice" + debug_history(hist, c, *o, changed.size()));
  o->objects.insert(c.key);
  if (o->kind == OpKind::grow) return;  // growth data: its own rows, all of its value
  if (o->kind != OpKind::write) return violate(what + " holds the id of a non-writing op " + std::to_string(w));
  for (std::size_t i = 0; i < after.size(); ++i) {
    const std::int64_t row = ref.row + static_cast<std::int64_t>(i) / cols,
                       col = ref.col + static_cast<std::int64_t>(i) % cols;
    const bool covered = o->cover.count(pack(row, col)) > 0;
    if (covered ? after[i] != w : after[i] != before[i])
      return violate(what + " by op " + std::to_string(w) + ": element (" + std::to_string(row) + ", " +
                     std::to_string(col) + ") is " + std::to_string(after[i]) + ", expected " +
                     std::to_string(covered ? w : before[i]) + (covered ? " (written)" : " (kept)"));
  }
}

void Model::end(std::uint64_t id, std::uint64_t store_seq, bool ok, const std::string& error, bool uncertain) {
  std::lock_guard lk(mu_);
  OpRecord* o = op(id);
  if (!o) return;
  o->done = true;
  o->ok = ok;
  o->end = store_seq;
  o->error = error;
  o->uncertain = uncertain || error.find("may still take effect") != std::string::npos ||
                 error.find("may have taken effect") != std::string::npos;
  o->in_effect = error.find("in effect") != std::string::npos;
  const std::string what = "op " + std::to_string(id) + " (" + (ok ? std::string("done") : error) + ")";
  if (o->kind == OpKind::grow || o->kind == OpKind::attrs) {
    if (ok && o->transitions != 1)
      violate(what + " made " + std::to_string(o->transitions) + " metadata changes, not 1");
    if (!ok && !o->uncertain && !o->in_effect && o->transitions != 0)
      violate(what + " failed, yet its metadata change was stored");
  }
  if (o->kind == OpKind::write && !ok && !o->uncertain) {
    std::size_t claimed = 0;
    if (const auto p = error.find("(after "); p != std::string::npos) claimed = std::stoul(error.substr(p + 7));
    std::smatch m;
    if (std::regex_search(error, m, std::regex("; ([0-9]+) more may hold it"))) claimed += std::stoul(m[1].str());
    if (o->objects.size() > claimed)
      violate(what + " failed, yet changed " + std::to_string(o->objects.size()) + " objects (its error says " +
              std::to_string(claimed) + ")");
  }
  // Forget operations long finished (their values stay in chunks; a change bearing one later is
  // itself a violation, reported as "of no operation still known").
  if (ops_.size() > 20000)
    std::erase_if(ops_, [&](const auto& kv) {
      return kv.second.done && !kv.second.uncertain && kv.second.end + kPruneAfter < store_seq;
    });
}

void Model::check_read(std::uint64_t id, int array, std::int64_t lower, std::int64_t upper, std::int64_t from,
                       std::int64_t to, const std::vector<std::int32_t>& values) {
  std::lock_guard lk(mu_);
  const OpRecord* o = op(id);
  if (!o) return;
  const ArrayGeometry& g = arrays_[static_cast<std::size_t>(array)];
  const std::string what = "read op " + std::to_string(id) + " of " + g.path;
  // The domain: one a version of zarr.json current during the read stated.
  const auto& m = meta_[static_cast<std::size_t>(array)];
  bool domain_ok = false, known = false;
  for (std::size_t i = m.size(); i-- > 0;) {
    const std::uint64_t next = i + 1 < m.size() ? m[i + 1].seq : ~std::uint64_t{0};
    if (next <= o->start) {
      known = true;
      break;
    }
    if (m[i].seq <= o->end && m[i].lower == lower && m[i].upper == upper) domain_ok = true;
  }
  if (!domain_ok) {
    if (known)
      violate(what + " saw rows [" + std::to_string(lower) + ", " + std::to_string(upper) +
              "), which no zarr.json stated during the read");
    else
      ++unverifiable_;
    return;
  }
  // Each read unit (inner chunk when sharded): one version of its object current during the read.
  const std::int64_t ur = g.chunk[0], uc = g.chunk[1], orow = g.object_rows(), ocol = g.object_cols();
  for (std::int64_t r0 = floor_div(from, ur) * ur; r0 < to; r0 += ur)
    for (std::int64_t c0 = 0; c0 < g.width; c0 += uc) {
      const std::int64_t obr = floor_div(r0, orow), obc = c0 / ocol;
      const std::string key = g.path + "/c/" + std::to_string(obr) + "/" + std::to_string(obc);
      const auto it = objects_.find(key);
      auto matches = [&](const std::vector<std::int32_t>* v) {
        for (std::int64_t r = std::max(r0, from); r < std::min(r0 + ur, to); ++r)
          for (std::int64_t c = c0; c < c0 + uc; ++c) {
            const std::int32_t stored =
                v ? (*v)[static_cast<std::size_t>((r - obr * orow) * ocol + (c - obc * ocol))] : 0;
            if (values[static_cast<std::size_t>((r - from) * g.width + c)] != stored) return false;
          }
        return true;
      };
      if (it == objects_.end()) {  // never stored since the run began: the fill value
        if (!matches(nullptr)) violate(what + ": " + key + " was never stored, yet read as data");
        continue;
      }
      const auto& h = it->second;
      bool ok = false, covered = false;
      for (std::size_t i = h.size(); i-- > 0;) {
        const std::uint64_t next = i + 1 < h.size() ? h[i + 1].seq : ~std::uint64_t{0};
        if (next <= o->start) {
          covered = true;
          break;
        }
        if (h[i].seq <= o->end && matches(&h[i].values)) {
          ok = true;
          break;
        }
      }
      if (!ok && !covered && h.size() < kKeepVersions && matches(nullptr)) ok = true;  // before its first version
      if (!ok && (covered || h.size() < kKeepVersions))
        violate(what + ": rows " + std::to_string(r0) + "+, cols " + std::to_string(c0) + "+ of " + key +
                " match no version stored during the read");
      else if (!ok)
        ++unverifiable_;
    }
}

std::vector<std::string> Model::violations() const {
  std::lock_guard lk(mu_);
  return violations_;
}
std::uint64_t Model::violation_count() const {
  std::lock_guard lk(mu_);
  return violation_count_;
}
std::uint64_t Model::changes() const {
  std::lock_guard lk(mu_);
  return changes_;
}
std::uint64_t Model::unverifiable_reads() const {
  std::lock_guard lk(mu_);
  return unverifiable_;
}

}  // namespace zarrpp::sim
