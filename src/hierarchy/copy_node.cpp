// Copying an array to another place (re-chunked, re-encoded): refuses overlapping source and
// destination, walks only the chunks the source stores, writes the destination's chunks before its
// zarr.json, and replaces an existing destination only after the source has been read in full.
#include <algorithm>
#include <atomic>
#include <set>

#include "../array/engine.hpp"
#include "../node/node.hpp"
#include "../select/broadcast.hpp"
#include "zarrpp/array/array.hpp"
#include "zarrpp/core/thread_pool.hpp"
#include "zarrpp/grid/chunk_grid.hpp"

namespace zarrpp {

namespace {

std::string node_location(const Store& store, const std::string& path) {
  return path.empty() ? store.location() : store.location() + "/" + path;
}

using Index = std::vector<std::int64_t>;

// The 0-based selection of a destination storage unit.
Selection unit_selection(const ChunkGrid& g, const Index& idx) {
  Selection sel;
  for (std::size_t d = 0; d < idx.size(); ++d) {
    const auto [lo, hi] = g.index_range(d, idx[d]);
    sel.push_back(slice(lo, hi));
  }
  return sel;
}

// Destination storage units that hold any element of the source's stored chunks (every unit when
// the source store cannot list).
std::vector<Index> units_to_copy(const Array& src, const ChunkGrid& dst_grid, bool every_unit) {
  const auto sm = src.metadata();
  const std::size_t r = sm.rank();
  std::set<Index> out;
  auto add_all = [&](const std::vector<std::pair<std::int64_t, std::int64_t>>& box) {
    // every dst unit intersecting [lo, hi) per dimension
    std::vector<std::pair<std::int64_t, std::int64_t>> ch(r);
    for (std::size_t d = 0; d < r; ++d) {
      if (box[d].first >= box[d].second) return;
      ch[d] = {dst_grid.locate(d, box[d].first).chunk, dst_grid.locate(d, box[d].second - 1).chunk + 1};
    }
    Index cur(r);
    for (std::size_t d = 0; d < r; ++d) cur[d] = ch[d].first;
    for (;;) {
      out.insert(cur);
      std::size_t d = r;
      while (d-- > 0) {
        if (++cur[d] < ch[d].second) break;
        cur[d] = ch[d].first;
      }
      if (d == SIZE_MAX) break;
    }
  };
  if (r == 0) {
    if (src.nshards_stored() > 0) out.insert(Index{});
    return {out.begin(), out.end()};
  }
  const ChunkGrid sg = ChunkGrid::from_metadata(sm);
  if (every_unit || !src.store()->capabilities().listing) {
    std::vector<std::pair<std::int64_t, std::int64_t>> all(r);
    for (std::size_t d = 0; d < r; ++d) all[d] = {0, sm.shape[d]};
    add_all(all);
    return {out.begin(), out.end()};
  }
  const std::string prefix = src.path().empty() ? "" : src.path() + "/";
  for (const auto& key : src.stored_chunk_keys()) {
    const auto idx = sm.chunk_key_encoding.decode(std::string_view(key).substr(prefix.size()), r);
    if (!idx) continue;
    std::vector<std::pair<std::int64_t, std::int64_t>> box(r);
    for (std::size_t d = 0; d < r; ++d) box[d] = sg.index_range(d, (*idx)[d]);
    add_all(box);
  }
  return {out.begin(), out.end()};
}

}  // namespace

ArrayMetadata with_chunk_grid(ArrayMetadata m, const std::string& grid) {
  auto& g = m.chunk_grid;
  if (grid == "regular") {
    g = ChunkGridMetadata::regular(g.chunk_shape);
  } else if (grid == "regular_bounded") {
    if (g.kind != ChunkGridMetadata::Kind::RegularBounded)
      g = ChunkGridMetadata::regular_bounded(g.chunk_shape, Shape(m.rank(), 0), Shape(m.rank(), 0));
  } else {
    throw ArgumentError("unknown chunk grid '" + grid + "' (regular or regular_bounded)");
  }
  return m;
}

Array copy_array(const Array& src, const StorePtr& store, const std::string& path_in, const ArrayMetadata& meta,
                 const CopyOptions& options) {
  if (!store) throw ArgumentError("copy_array: no store given");
  const std::string path = normalize_node_path(path_in);
  // The destination's metadata, validated as create does, before anything is touched.
  const auto sm = src.metadata();
  ArrayMetadata m = meta;
  // Both are read and written by 0-based selections: a regular destination starts at the
  // source's first element, wherever the source's domain starts.
  const bool to_regular = m.chunk_grid.kind == ChunkGridMetadata::Kind::Regular;
  if (m.shape != sm.shape || !(m.data_type == sm.data_type) ||
      (!to_regular && m.chunk_grid.lower_bound != sm.chunk_grid.lower_bound))
    throw ArgumentError("copy_array: the destination's shape, data type and lower bound must be the source's (" +
                        shape_str(sm.shape) + " " + sm.data_type.name() + ", lower bound " +
                        shape_str(sm.chunk_grid.lower_bound) + "), or its grid regular");
  // (A v2 destination's .zarray states the codecs given, not the source's.)
  m = checked_for_create(m);
  const auto snap = make_snapshot(m, std::nullopt);

  // Source and destination must not overlap: replacing one would destroy the other. What the
  // stores say the folders are decides (bind mounts and symlinks lead to the same node).
  const std::string from = node_location(*src.store(), src.path()), to = node_location(*store, path);
  auto o = node::overlap(*src.store(), src.path(), *store, path);
  // A node there that overwrite will remove: the stores are also asked by what they hold (stores
  // whose identity zarrpp cannot see, such as a mapping over another library's store).
  if (o == node::Overlap::none && options.overwrite &&
      (store->exists(node::meta_key(path)) || node::has_v2_documents(*store, path)))
    o = node::probe_overlap(*src.store(), src.path(), *store, path);
  if (o != node::Overlap::none)
    throw ArgumentError("copy: source '" + from + "' and destination '" + to + "' " +
                        (o == node::Overlap::same ? "are the same node"
                         : o == node::Overlap::first_inside_second
                             ? "overlap (the source lies inside the destination)"
                             : "overlap (the destination lies inside the source)") +
                        "; copy to another place");

  // Either format: a v2 node there must be refused before anything is written (its chunk keys
  // may be the ones this copy would write and, on failure, take back).
  const bool exists = store->exists(node::meta_key(path)) || node::has_v2_documents(*store, path);
  // The format of the node replaced, whose consolidated metadata must forget it.
  const int replaced = !exists ? 0 : node::has_v2_documents(*store, path) ? 2 : 3;
  if (exists && !options.overwrite)  // refused before the source is listed (a remote listing is slow)
    throw ConflictError(ErrorCode::already_exists,
                        "a node already exists at '" + node::shown(path) + "' (use overwrite to replace it)");

  // With another fill value, what the source does not store must be written out too.
  const bool vlen = m.data_type.is_vlen();
  const auto units = units_to_copy(src, snap->grid, m.fill_value.bytes != sm.fill_value.bytes);
  const std::size_t conc = options.concurrency ? options.concurrency : default_concurrency();
  Array s = src;
  s.set_concurrency(1);
  if (exists) {
    // Read the whole source first: a corrupt or unreadable source fails here, with the
    // destination exactly as it was.
    ThreadPool::global().parallel_for(
        units.size(), conc, [&](std::size_t i) { (void)s.read(s.plan(unit_selection(snap->grid, units[i]))); });
    node::check_can_write_document(*store, path, &snap->meta, m.zarr_format);
    node::remove_owned(*store, path);
  }

  // Chunks first, zarr.json last: until it is written there is no new node to read.
  const Engine e{*store, *snap, node::prefix_of(path), 1, false};
  std::atomic<std::int64_t> done{0};
  const auto total = static_cast<std::int64_t>(units.size());
  try {
    node::prepare_create(*store, path, options.overwrite, &snap->meta, m.zarr_format);
    ThreadPool::global().parallel_for(units.size(), conc, [&](std::size_t i) {
      const Selection sel = unit_selection(snap->grid, units[i]);
      const auto plan = plan_orthogonal(normalize_selection(sel, snap->meta.shape), snap->unit_grid);
      if (vlen) {
        // The unit's strings go into a heap of its own; the elements are indices into it.
        const auto values = std::get<VlenValues>(s.read(s.plan(sel)));
        // Elements no chunk holds that read as a value not of the type (a v2 object array's 0 or
        // None) stay unwritten when the whole unit is such: the copy reads them so too.
        if (!values.missing.empty() &&
            std::find(values.missing.begin(), values.missing.end(), false) == values.missing.end()) {
          const auto n = ++done;
          if (options.progress) options.progress(n, total);
          return;
        }
        const std::string fill = m.fill_text();
        auto heap = std::make_shared<VlenHeap>(fill);
        std::vector<std::string> fresh;
        NDArray idx(m.data_type, values.shape);
        auto* p = reinterpret_cast<std::uint64_t*>(idx.raw_data());
        std::vector<std::size_t> at;
        for (std::size_t k = 0; k < values.values.size(); ++k) {
          p[k] = 0;
          if (values.values[k] != fill) {
            at.push_back(k);
            fresh.push_back(values.values[k]);
          }
        }
        const std::uint64_t first = heap->add(std::move(fresh));
        for (std::size_t k = 0; k < at.size(); ++k) p[at[k]] = first + k;
        const auto hs = with_heap(*snap, heap);
        const Engine he{*store, *hs, node::prefix_of(path), 1, false};
        he.write(plan, broadcast_to(idx.view(), plan.out_shape, snap->meta.data_type));
      } else {
        const auto data = s.read(sel);
        e.write(plan, broadcast_to(data.view(), plan.out_shape, snap->meta.data_type));
      }
      const auto n = ++done;
      if (options.progress) options.progress(n, total);
    });
    node::write_array_documents(*store, path, snap->meta, snap->meta_bytes, replaced);
  } catch (const Error& err) {
    // Take back what this copy wrote (no zarr.json names it), then report.
    std::string undo = "what it had written was removed again";
    try {
      std::vector<std::string> keys;
      for (const auto& u : units) keys.push_back(node::prefix_of(path) + snap->meta.chunk_key_encoding.encode(u));
      for (const auto& k : keys) store->erase(k);
      node::prune_dirs_of(*store, keys, node::prefix_of(path));
    } catch (const Error& e2) {
      undo = std::string("removing what it had written failed too (") + e2.what() +
             "): chunk keys without a zarr.json remain";
    }
    throw_like(
        err, "copy to '" + to + "' failed; " + undo +
                 (exists ? "; the node that was there had been removed before (the source was read whole first)" : "") +
                 ": " + err.what());
  }
  return Array::open(store, path);
}

bool nodes_overlap(const Store& a, const std::string& path_a, const Store& b, const std::string& path_b) {
  return node::overlap(a, normalize_node_path(path_a), b, normalize_node_path(path_b)) != node::Overlap::none;
}

bool destination_overlaps_source(Store& src, const std::string& src_path, Store& dst, const std::string& dst_path) {
  const std::string sp = normalize_node_path(src_path), dp = normalize_node_path(dst_path);
  if (node::overlap(src, sp, dst, dp) != node::Overlap::none) return true;
  // Only a node there is removed by an overwrite; with none, nothing is written to find out.
  return node::read_doc(dst, dp, false) && node::probe_overlap(src, sp, dst, dp) != node::Overlap::none;
}

}  // namespace zarrpp
