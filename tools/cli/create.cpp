// zarrpp create: a new array.
#include <CLI/CLI.hpp>
#include <sstream>

#include "commands.hpp"
#include "common.hpp"

namespace zarrpp::cli {

namespace {

class CreateCommand final : public Command {
 public:
  void add(CLI::App& app) override;
  void run() override;

 private:
  ArraySpec make_spec() const;

  std::string array_, shape_, chunks_, dtype_, fill_, comp_ = "none", shards_, lower_, dims_, sep_ = "/", attrs_;
  bool crc_ = false, over_ = false;
  int format_ = 3;
  CLI::Option* sep_opt_ = nullptr;
};

void CreateCommand::add(CLI::App& app) {
  sub_ = app.add_subcommand("create", "Create an array");
  sub_->add_option("ARRAY", array_, "Directory for the array")->required();
  sub_->add_option("--shape", shape_, "Shape, e.g. 6,4")->required();
  sub_->add_option("--chunks", chunks_,
                   "Chunk shape, e.g. 4,4, or auto (zarr-python 3's choice), or each dimension's chunk sizes for a "
                   "rectilinear grid, as zarr.json states them: '[[10,20,30],[50,50]]' ([size, count] pairs and a "
                   "bare size for a regular dimension too: '[[10,20,30],50]')")
      ->required();
  sub_->add_option("--dtype", dtype_,
                   "Data type: bool, int8..uint64, float16/32/64, complex64/128, r<N>, string, bytes, or NumPy's "
                   "spelling (i4, <f8, U12, S5, M8[ns], m8[s], ...); a structured type as Zarr v2's JSON descr, "
                   "'[[\"a\", \"<i4\"], [\"b\", \"<f8\", [2]]]' (with --zarr-format 2)")
      ->required();
  sub_->add_option("--fill-value", fill_,
                   "Fill value (default 0 / false / empty): text as typed for U<n>, S<n> and string, base64 for "
                   "bytes, a count of the unit or NaT for datetime64/timedelta64");
  sub_->add_option("--compressor", comp_, compressor_forms());
  sub_->add_flag("--crc32c", crc_, "Append a CRC32C checksum to every chunk");
  sub_->add_option("--shards", shards_,
                   "Shard shape (a multiple of the chunk shape), or auto (two chunks along dimensions of more than "
                   "8), or each dimension's shard sizes (rectilinear shards, each a multiple of the chunk shape), "
                   "e.g. '[[60,40,20],[50,50]]'");
  sub_->add_option("--lower-bound", lower_, "Lower bound per dimension (creates a regular_bounded array)");
  sub_->add_option("--dimension-names", dims_, "Dimension names, e.g. t,x");
  sep_opt_ = sub_->add_option("--separator", sep_, "Chunk key separator: / or . (default / for v3, . for v2)")
                 ->check(CLI::IsMember({"/", "."}));
  sub_->add_option("--attrs", attrs_, "Attributes as a JSON object");
  sub_->add_flag("--overwrite", over_, "Replace an existing node");
  sub_->add_option("--zarr-format", format_,
                   "2 writes .zarray/.zattrs as zarr-python 2 does (no shards, crc32c or lower bound); default 3")
      ->check(CLI::IsMember({2, 3}));
}

// "[[10, 20, 30], [[50, 2]]]": each dimension's sizes as a rectilinear grid's chunk_shapes states
// them (sizes, [size, count] pairs, a bare size repeated over the dimension), covering the shape
// (the last may pass its end). Every dimension is written as a list, as zarr-python writes them.
std::vector<std::vector<std::int64_t>> parse_grid_sizes(const std::string& text, const Shape& shape,
                                                        const std::string& opt) {
  constexpr std::int64_t kMaxListed = 10'000'000;
  try {
    const Json doc = {{"name", "rectilinear"},
                      {"configuration", {{"kind", "inline"}, {"chunk_shapes", parse_json_document(text, opt)}}}};
    const auto g = ChunkGridMetadata::from_json(doc, shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (!g.chunk_runs[d].empty() && g.covered(d) < shape[d])
        throw ArgumentError(opt + ": the sizes of dimension " + std::to_string(d) + " add up to " +
                            std::to_string(g.covered(d)) + ", short of its extent " + std::to_string(shape[d]));
    const ChunkGrid grid(shape, g.chunk_shape, g.chunk_runs);
    if (grid.total_chunks() > kMaxListed)
      throw ArgumentError(opt + ": more than " + std::to_string(kMaxListed) + " chunks; use fewer, larger ones");
    std::vector<std::vector<std::int64_t>> out(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) {
      std::int64_t listed = 0;
      for (const auto& run : g.chunk_runs[d]) listed += run.count;
      if (!g.chunk_runs[d].empty() && listed != grid.end_chunk(d))
        throw ArgumentError(opt + ": dimension " + std::to_string(d) + " lists sizes wholly past its extent " +
                            std::to_string(shape[d]));
      for (std::int64_t k = 0; k < grid.end_chunk(d); ++k) out[d].push_back(grid.chunk_extent(d, k));
    }
    return out;
  } catch (const MetadataError& e) {
    throw ArgumentError(opt + ": " + e.what());
  }
}

bool lists_sizes(const std::string& text) { return !text.empty() && text.front() == '['; }

// The array the options describe (every option parsed and checked here).
ArraySpec CreateCommand::make_spec() const {
  ArraySpec spec{.shape = parse_shape(shape_, "--shape"), .dtype = data_type_from_user(dtype_)};
  if (lists_sizes(shards_) && chunks_ == "auto")
    throw ArgumentError(
        "--chunks auto with shard sizes listed: give the inner chunk shape, which must divide every "
        "shard size");
  if (lists_sizes(chunks_))
    spec.chunk_sizes = parse_grid_sizes(chunks_, spec.shape, "--chunks");
  else
    spec.chunks =
        chunks_ == "auto" ? auto_chunks(spec.shape, spec.dtype, !shards_.empty()) : parse_shape(chunks_, "--chunks");
  if (!fill_.empty()) spec.fill_value = cli_value_json(fill_, spec.dtype);
  spec.compressors = compressors_of(comp_);
  spec.crc32c = crc_;
  if (lists_sizes(shards_))
    spec.shard_sizes = parse_grid_sizes(shards_, spec.shape, "--shards");
  else if (!shards_.empty())
    spec.shards = shards_ == "auto" ? auto_shards(spec.shape, spec.chunks, spec.dtype, std::nullopt)
                                    : parse_shape(shards_, "--shards");
  if (!lower_.empty()) spec.lower_bound = parse_shape(lower_, "--lower-bound");
  if (!dims_.empty()) {
    std::vector<std::optional<std::string>> names;
    std::stringstream ss(dims_);
    for (std::string n; std::getline(ss, n, ',');) names.emplace_back(n);
    spec.dimension_names = names;
  }
  spec.chunk_key_encoding = ChunkKeyEncoding::default_(sep_[0]);
  if (!attrs_.empty()) spec.attributes = parse_json_document(attrs_, "--attrs");
  spec.overwrite = over_;
  spec.zarr_format = format_;
  if (format_ == 2) spec.chunk_key_encoding = ChunkKeyEncoding::v2(sep_opt_->count() ? sep_[0] : '.');
  return spec;
}

void CreateCommand::run() {
  const ArraySpec spec = make_spec();
  if (!over_ && holds_node(array_))
    throw ConflictError(ErrorCode::already_exists, "'" + array_ + "' already holds a Zarr node (use --overwrite)");
  // Everything is validated before a directory is made; a failure after leaves none behind.
  (void)array_metadata(spec);
  NewDirs made(array_);
  const auto z = Array::create(open_dir(array_, Use::create), spec);
  made.keep();
  // Sizes listed that are a regular grid's make a regular grid (Array::create decides, as for
  // Python): said, since such a grid grows by whole chunks rather than by chunks of the growth.
  for (const auto& [given, what] : {std::pair{&spec.chunk_sizes, "--chunks"}, std::pair{&spec.shard_sizes, "--shards"}})
    if (!given->empty() && !z.metadata().chunk_grid.rectilinear())
      std::cout << "note: " << what << " lists the sizes of a regular grid: written as the regular grid of chunks "
                << shape_str(*regular_chunk_shape(*given)) << " (growth adds whole chunks of that size)\n";
}

}  // namespace

std::unique_ptr<Command> make_create() { return std::make_unique<CreateCommand>(); }

}  // namespace zarrpp::cli
