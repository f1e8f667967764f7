// The helpers the subcommands share (common.hpp): argument parsing, the network options, opening
// ARRAY and STORE, and NewDirs.
#include "common.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <functional>
#include <utility>

namespace fs = std::filesystem;

namespace zarrpp::cli {

namespace {

// Network options for URLs (--timeout, --stall-timeout, ...), by RemoteOptions' names, as given.
std::vector<std::pair<std::string, double>> g_net;

// The codec pipeline of an array.
CodecPipeline pipeline_of(const ArrayMetadata& m) {
  return CodecPipeline::from_metadata(m.codecs, ChunkSpec{m.chunk_grid.chunk_shape, m.data_type, m.fill_element()});
}

// One network option: checked by RemoteOptions::set (the rules Python's storage_options follow too).
void net_option(CLI::App& app, const char* flag, const char* name, const std::string& help) {
  app.add_option_function<std::string>(
         flag,
         [name](const std::string& v) {
           double x = 0;
           std::from_chars(v.data(), v.data() + v.size(), x);
           g_net.emplace_back(name, x);
         },
         help)
      ->check(CLI::Validator(
          [name](std::string& v) -> std::string {
            double x = 0;
            const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
            if (v.empty() || ec != std::errc() || p != v.data() + v.size()) return "'" + v + "' is not a number";
            try {
              RemoteOptions().set(name, x);
            } catch (const ArgumentError& e) {
              return e.what();
            }
            return "";
          },
          std::string(name) == "max_attempts" || std::string(name) == "max_in_flight" ? "N" : "SECONDS"));
}

}  // namespace

// ---- argument parsing helpers -------------------------------------------------------------------

Shape parse_shape(const std::string& s, const char* what) {
  Shape out;
  if (s.empty()) return out;
  std::size_t i = 0;
  while (i <= s.size()) {
    const std::size_t j = std::min(s.find(',', i), s.size());
    const std::string part = s.substr(i, j - i);
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size())
      throw ArgumentError(std::string(what) + ": '" + s + "' is not a comma-separated list of integers");
    out.push_back(v);
    i = j + 1;
  }
  return out;
}

Domain parse_domain(const std::string& s) {
  Domain d;
  std::size_t i = 0;
  while (i <= s.size()) {
    const std::size_t j = std::min(s.find(',', i), s.size());
    const std::string part = s.substr(i, j - i);
    const auto colon = part.find(':', 1);
    if (colon == std::string::npos) throw ArgumentError("--domain: '" + part + "' is not LO:HI");
    const auto lo = parse_shape(part.substr(0, colon), "--domain");
    const auto hi = parse_shape(part.substr(colon + 1), "--domain");
    if (lo.size() != 1 || hi.size() != 1) throw ArgumentError("--domain: '" + part + "' is not LO:HI");
    d.push_back({lo[0], hi[0]});
    i = j + 1;
  }
  return d;
}

// The compressors the registry knows (bytes -> bytes codecs), with their shorthand:
// "zstd[:level[:checksum]]", ... for messages and --help.
std::string compressor_forms() {
  std::string out = "none | auto";
  for (const auto& c : codec::known()) {
    if (c.role != codec::Role::bytes_to_bytes) continue;
    std::string form = c.name;
    std::string tail;
    for (const auto& k : codec::shorthand_keys(c.name)) {
      form += "[:" + k;
      tail += "]";
    }
    out += " | " + form + tail;
  }
  return out;
}

// "none", "auto" or a compressor's shorthand ("zstd:3", "blosc:lz4:5:bitshuffle"), through the registry.
std::optional<codec::Any> parse_compressor(const std::string& s) {
  if (s.empty() || s == "none") return std::nullopt;
  CodecMetadata m;
  try {
    m = codec::from_shorthand(s);
  } catch (const ArgumentError& e) {
    throw ArgumentError(std::string("--compressor: ") + e.what());
  }
  if (codec::role_of(m.name) != codec::Role::bytes_to_bytes)
    throw ArgumentError("--compressor: '" + m.name + "' is not a compressor (bytes -> bytes codec); use " +
                        compressor_forms());
  return m;
}

// --compressor's value as the compressors of a chain: "auto" is the core's default.
std::vector<codec::Any> compressors_of(const std::string& s) {
  if (s == "auto") return codec::default_compressors();
  const auto c = parse_compressor(s);
  return c ? std::vector<codec::Any>{*c} : std::vector<codec::Any>{};
}

// A scalar given on the command line, in the data type's fill-value encoding: 5, -1.5, NaN, true, 0x7fc00000.
Json scalar_json(const std::string& v) {
  try {
    return Json::parse(v);
  } catch (const nlohmann::json::exception&) {
    if (v == "nan" || v == "NaN") return "NaN";
    if (v == "inf" || v == "Infinity") return "Infinity";
    if (v == "-inf" || v == "-Infinity") return "-Infinity";
    if (v == "True") return true;
    if (v == "False") return false;
    return v;
  }
}

namespace {
// A structured value typed on the command line, in the fill value's JSON: an S<n> field's text
// becomes base64 of its bytes, as a lone S<n> value's does (subarray and nested fields too).
Json typed_fields_json(const Json& j, const DataType& t) {
  if (t.id() == DataType::Id::fixed_bytes && j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    return base64_encode({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
  }
  if (t.kind() != DataKind::Struct || !(j.is_object() || j.is_array())) return j;
  const auto& fields = t.fields();
  Json out = j;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& f = fields[i];
    Json* v = j.is_object() ? (out.contains(f.name) ? &out[f.name] : nullptr) : (i < out.size() ? &out[i] : nullptr);
    if (!v) continue;  // parse_fill_value says what is missing
    std::function<void(Json&, std::size_t)> rec = [&](Json& e, std::size_t dim) {
      if (dim == f.shape.size() || !e.is_array()) {
        e = typed_fields_json(e, f.type);
        return;
      }
      for (auto& x : e) rec(x, dim + 1);
    };
    rec(*v, 0);
  }
  return out;
}
}  // namespace

Json cli_value_json(const std::string& v, const DataType& t) {
  using Id = DataType::Id;
  if (t == DataType::string_t || t.id() == Id::fixed_utf32) return v;  // text as typed, digits too
  if (t.id() == Id::fixed_bytes)  // the bytes typed (as NumPy's S<n> takes text), not base64
    return base64_encode({reinterpret_cast<const std::uint8_t*>(v.data()), v.size()});
  if (t.kind() == DataKind::Struct) return typed_fields_json(scalar_json(v), t);
  return scalar_json(v);
}

// `what` names the option the value came from: the value is parsed as a fill value is, but a
// refusal must name the option given (not "fill_value", which the user never gave).
NDArray scalar_array(const std::string& v, const DataType& t, const std::string& what) {
  NDArray a(t, {});
  Bytes b;
  try {
    b = parse_fill_value(cli_value_json(v, t), t);
  } catch (const MetadataError& e) {
    // parse_fill_value says "fill_value: X is not valid for data type T: why"; keep the why.
    const std::string m = e.what(), mark = "for data type " + t.name() + ": ";
    const auto at = m.find(mark);
    throw ArgumentError(what + ": " + v + " is not a valid " + t.name() + " value (" +
                        (at == std::string::npos ? m : m.substr(at + mark.size())) + ")");
  }
  std::memcpy(a.raw_data(), b.data(), b.size());
  return a;
}

// A message on one line: control characters (from files, keys, arguments) escaped as \n, \t, \xNN.
std::string one_line(std::string_view m) {
  std::string out;
  for (const char ch : m) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

// --axis: an integer; negative counts from the end, as in NumPy.
void add_selection_flags(CLI::App& sub, bool& coords, bool& oindex) {
  sub.add_flag("--coords", coords,
               "SELECTION is in the domain's coordinates (e.g. \"-10:0\"), not zero-based from the lower bound");
  sub.add_flag("--oindex", oindex,
               "Index arrays select each dimension on their own (as z.oindex[...]); without it, SELECTION "
               "means what Python's z[...] means: arrays one per dimension pair up into points");
}

IndexPlan plan_selection(const Selection& sel, const Array& z, bool oindex, bool coords) {
  return plan_index(index_expr(sel), z.shape(), oindex ? IndexMode::orthogonal : IndexMode::numpy, coords);
}

std::size_t parse_axis(const std::string& text, std::size_t ndim) {
  std::int64_t a = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  const auto [p, ec] = std::from_chars(b, e, a);
  if (text.empty() || ec != std::errc() || p != e) throw ArgumentError("--axis: '" + text + "' is not an integer");
  const auto n = static_cast<std::int64_t>(ndim);
  if (a < -n || a >= n)
    throw ArgumentError("--axis " + text + " is out of range for a " + std::to_string(ndim) + "-d array (valid: " +
                        (n == 0 ? std::string("none") : std::to_string(-n) + " to " + std::to_string(n - 1)) + ")");
  return static_cast<std::size_t>(a < 0 ? a + n : a);
}

namespace {

// The zip files this command opened, and what it made for them (to be removed if it fails).
struct OpenedZip {
  std::shared_ptr<ZipStore> store;
  bool made = false;                // the archive did not exist before
  std::vector<fs::path> made_dirs;  // folders made for it, deepest first
};
std::vector<OpenedZip>& zip_stores() {
  static std::vector<OpenedZip> opened;
  return opened;
}

// The options every local path or URL is opened with: the network flags, and zip files for
// paths into them (a new one made when creating, as zarr-python 2 takes "out/new.zip/array").
OpenStoreOptions store_options(Use use) {
  const bool create = use == Use::create;
  OpenStoreOptions o{.file = FileStore::Options{.create = create}, .new_zip_files = create, .memory = false};
  o.zip.mode = use == Use::read ? ZipStore::Mode::read : ZipStore::Mode::append;
  for (RemoteOptions* net : {&o.http.net, &o.s3.net, &o.azure.net, &o.gcs.net}) {
    for (const auto& [name, value] : g_net) net->set(name, value);
  }
  return o;
}

// Opens `at`; a zip file is kept to be closed when the command ends (close_zip_stores).
StorePtr open_at(const StoreLocation& at, const std::string& dir, Use use) {
  auto r = open_location(at, dir, store_options(use));
  if (r.zip) zip_stores().push_back(OpenedZip{.store = r.zip, .made = r.zip_made, .made_dirs = r.made_dirs});
  return r.store;
}

}  // namespace

void close_zip_stores(bool failed) {
  auto& opened = zip_stores();
  std::string failures;
  for (auto& z : opened) {
    try {
      z.store->close();
      // A failed command that made an archive and wrote nothing into it leaves no file behind:
      // checked and removed under the archive's lock, so no other writer's commit goes with it.
      if (failed && z.made) {
        try {
          auto check = ZipStore::open(z.store->path(),
                                      {.mode = ZipStore::Mode::append, .lock_timeout = std::chrono::milliseconds(0)});
          const auto held = check->lock("zarr.json");
          if (check->list_prefix("").empty()) {
            fs::remove(z.store->path());
            for (const auto& d : z.made_dirs) ::rmdir(d.c_str());  // only when empty
          }
          check->close();
        } catch (const ConflictError&) {
          // another writer has it now: it is that writer's archive
        }
      }
    } catch (const std::exception& e) {
      failures += (failures.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  opened.clear();
  if (!failures.empty()) throw StoreError(failures);
}

// ARRAY / STORE arguments: a local directory, a zip file, or a URL (s3://, http(s)://, file://),
// resolved as every front end resolves them (resolve_store).
StorePtr open_dir(const std::string& dir, Use use) {
  const bool create = use == Use::create;
  // A zip file (zarr-python's ZipStore), or a folder inside one ("data.zip/group/array"), is
  // written into when the command ends (close_zip_stores).
  const auto at = locate_store(dir, create);
  if (at.kind == StoreLocation::Kind::directory && dir.find("://") == std::string::npos && !create &&
      !fs::is_directory(dir)) {
    std::error_code ec;
    const auto st = fs::status(dir, ec);
    if (fs::exists(st))  // a FIFO or a file: the file store says what it is
      (void)FileStore::open(dir, FileStore::Options{.create = false});
    throw NotFoundError("no such directory '" + dir + "'");
  }
  return open_at(at, dir, use);
}

NewDirs::NewDirs(const std::string& where) {
  if (where.find("://") != std::string::npos) return;
  std::error_code ec;
  fs::path p = os_path(where);
  if (p.filename().empty()) p = p.parent_path();  // "a.zarr/"
  for (; !p.empty() && p != p.root_path(); p = p.parent_path()) {
    if (fs::exists(fs::symlink_status(p, ec))) break;
    missing_.push_back(p);
  }
}

NewDirs::~NewDirs() {
  if (kept_) return;
  for (const auto& p : missing_) ::rmdir(p.c_str());  // deepest first; only if empty
}

bool holds_node(const std::string& where) {
  if (where.find("://") != std::string::npos) {
    auto s = open_dir(where, Use::read);
    return s->exists("zarr.json") || s->exists(".zarray") || s->exists(".zgroup");
  }
  std::error_code ec;
  if (!fs::is_directory(where, ec))
    if (const auto at = locate_store(where); at.kind == StoreLocation::Kind::zip) {  // a node inside a zip file
      const auto zip = open_at(at, where, Use::read);
      return zip->exists("zarr.json") || zip->exists(".zarray") || zip->exists(".zgroup");
    }
  for (const char* doc : {"zarr.json", ".zarray", ".zgroup"})
    if (fs::exists(fs::path(where) / doc)) return true;
  return false;
}

// The array at a directory or URL the user typed; errors about the node itself name what was
// typed ("'g' is a group, not an array"), not the store's root ("/").
Array open_array_at(const std::string& typed, Use use) {
  const auto store = open_dir(typed, use);  // "no such directory" and the like stand as they are
  try {
    return Array::open(store);
  } catch (const MetadataError& e) {
    if (e.code() != ErrorCode::wrong_node_type) throw;
    throw MetadataError(ErrorCode::wrong_node_type,
                        "'" + typed + "' is a group, not an array (zarrpp tree '" + typed + "' shows what it holds)");
  } catch (const NotFoundError&) {
    // Opening reads only the node's documents: not found means no node there.
    throw NotFoundError("no array at '" + typed + "' (no zarr.json or .zarray)");
  }
}

std::uint64_t selection_bytes(const Array& z, const IndexPlan& plan) {
  Shape shape;
  if (plan.kind == IndexPlan::Kind::orthogonal)
    shape = plan.coords ? z.coords().selection_shape(plan.selection) : z.selection_shape(plan.selection);
  else if (plan.kind == IndexPlan::Kind::points || plan.kind == IndexPlan::Kind::mask)
    shape = plan.shape;
  else
    return 0;
  std::uint64_t n = z.dtype().size();
  for (const auto s : shape)
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(s), &n)) return 0;  // past 16 EiB: unknown
  return n;
}

// The codecs of an array on one line (info and tree).
std::string codecs_summary(const ArrayMetadata& m) {
  std::string s;
  const auto pipeline = pipeline_of(m);
  const auto inner = pipeline.inner_codecs();
  for (const auto& c : m.codecs) {
    if (!s.empty()) s += " -> ";
    s += c.name;
    if (inner) {
      std::string in;
      for (const auto& i : *inner) {
        in += (in.empty() ? "" : " -> ") + i.name;
        if (i.configuration && codec::role_of(i.name) != codec::Role::array_to_bytes) in += i.configuration->dump();
      }
      s += "(" + Json(*pipeline.inner_chunk_shape()).dump() + ": " + in + ")";
    } else if (c.configuration && codec::role_of(c.name) != codec::Role::array_to_bytes) {
      s += c.configuration->dump();
    }
  }
  return s;
}

void add_network_options(CLI::App& app) {
  net_option(app, "--timeout", "timeout",
             "For URLs: seconds one request (one attempt) may take (0 = no limit; default 300)");
  net_option(app, "--connect-timeout", "connect_timeout", "For URLs: seconds to connect (default 10)");
  net_option(app, "--stall-timeout", "stall_timeout",
             "For URLs: give up an attempt when no byte moves for this long (0 = never; default 10)");
  net_option(app, "--retry-window", "retry_window",
             "For URLs: start no new attempt this long after the first (or the last one that moved data) (0 = no "
             "limit; default 30)");
  net_option(app, "--max-attempts", "max_attempts", "For URLs: attempts per request, 1 = no retries (default 4)");
  net_option(app, "--max-in-flight", "max_in_flight",
             "For URLs: requests on the wire at once, 1 to 1024 (default 128)");
}

}  // namespace zarrpp::cli
