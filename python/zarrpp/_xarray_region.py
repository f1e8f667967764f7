"""``to_zarrpp(ds, store, region=...)``: writing a Dataset into a part of a stored one, as xarray's
``to_zarr(region=...)`` does. A region write changes no metadata (no zarr.json, .zattrs or
.zmetadata is rewritten), so many workers can write their parts of one dataset at once; the
variables are encoded as the stored ones are, as growth encodes them."""
from __future__ import annotations

import warnings
from typing import Any, Dict, Hashable, List, Mapping, Optional, Set, Tuple

import numpy as np
import xarray as xr
from xarray.backends.common import _decode_variable_name

from ._array import Array
from ._group import Group
from ._xarray_common import DIMENSIONS_ATTR, _dimension_names, _extent
from ._xarray_encode import _check_round_trip, _encode, _stored_encoding


def _dataset_extent(g: Group) -> Dict[str, List[int]]:
    """Each dimension's extent as readers present it: recorded by the group, else the arrays'."""
    extent = _extent(g)
    recorded = g.attrs.get(DIMENSIONS_ATTR)
    if isinstance(recorded, dict):
        extent.update({str(k): [int(v[0]), int(v[1])] for k, v in recorded.items()})
    return extent


def _auto_region(g: Group, ds: xr.Dataset, extent: Dict[str, List[int]]) -> Dict[Hashable, slice]:
    """``region="auto"`` as newer xarray resolves it: each dimension with an index coordinate is
    where its values are in the stored coordinate (they must be there, contiguous and in order);
    a dimension without one is the whole dimension."""
    stored = dict(g.arrays())
    out: Dict[Hashable, slice] = {}
    for dim in ds.dims:
        if dim not in ds.indexes or str(dim) not in stored:
            out[dim] = slice(None)
            continue
        lo, hi = extent[str(dim)]
        have = np.asarray(stored[str(dim)].coords[lo:hi])
        want = np.asarray(ds.indexes[dim])
        pos = {v: i for i, v in enumerate(have.tolist())}
        at = [pos.get(v, -1) for v in want.tolist()]
        if not at or -1 in at or at != list(range(at[0], at[0] + len(at))):
            raise KeyError(f"region='auto': the values of the coordinate {dim!r} are not a contiguous part of the "
                           "stored coordinate, in order (write with an explicit region= instead)")
        out[dim] = slice(at[0], at[0] + len(at))
    return out


def _checked_region(ds: xr.Dataset, region: Mapping[Hashable, Any]) -> None:
    """xarray's checks of ``region=``: a dict of slices of the Dataset's dimensions, step 1, and
    every variable having one of its dimensions."""
    if not isinstance(region, dict):
        raise TypeError(f"``region`` must be a dict, got {type(region).__name__}")
    for k, v in region.items():
        if k not in ds.dims:
            raise ValueError(f"all keys in ``region`` are not in Dataset dimensions, got {list(region)} and "
                             f"{list(ds.dims)}")
        if not isinstance(v, slice):
            raise TypeError(f"all values in ``region`` must be slice objects, got {k!r}: {v!r}")
        if v.step not in (1, None):
            raise ValueError(f"step on all slices in ``region`` must be 1 or None, got {k!r}: {v!r}")
    outside = [k for k, v in ds.variables.items() if not set(region).intersection(v.dims)]
    if outside:
        raise ValueError(f"when setting `region` explicitly in to_zarr(), all variables in the dataset to write must "
                         f"have at least one dimension in common with the region's dimensions {list(region)}, but "
                         f"that is not the case for some variables here. To drop these variables from this dataset "
                         f"before exporting to zarr, write: .drop_vars({outside!r})")


def _box(name: Hashable, v: xr.Variable, dims: Tuple[str, ...], region: Mapping[Hashable, slice],
         extent: Dict[str, List[int]]) -> Tuple[slice, ...]:
    """Where ``v`` goes, in the array's coordinates; its shape must be the region's."""
    box = []
    for dim, n in zip(dims, v.shape):
        lo, hi = extent[dim]
        start, stop, _ = region.get(dim, slice(None)).indices(hi - lo)
        if stop - start != n:
            raise ValueError(f"variable {name!r} already exists with different dimension sizes: it has {n} "
                             f"elements along {dim!r}, but the region there holds {max(stop - start, 0)} "
                             f"(slice({start}, {stop}) of {hi - lo})")
        box.append(slice(lo + start, lo + stop))
    return tuple(box)


def _check_aligned(name: Hashable, z: Array, dims: Tuple[str, ...], box: Tuple[slice, ...],
                   safe_chunks: bool) -> None:
    """A Dask-backed part's region must start and end on the stored objects' boundaries (or at the
    array's end), so that no stored object is shared with another part that another task writes
    (newer xarray's rule for regions, ``safe_chunks=True``). With ``safe_chunks=False`` such a region
    is written by zarrpp's partial-chunk writes, conditioned on what is stored so both parts stay:
    refused on a store that cannot condition a write (a mapping that is not a dict, an S3 server
    without conditional writes), where one part would be lost."""
    cut = _cut(z, dims, box)
    if cut is None:
        return
    dim, b, bounds = cut
    lo = z.domain[dims.index(dim)][0]
    where = (f"region write of {name!r}: along {dim!r} the region [{b.start - lo}, {b.stop - lo}) cuts a stored "
             f"chunk (they start at {sorted(x - lo for x in bounds)[:8]}...), which another task's region may share")
    if safe_chunks:
        raise ValueError(f"{where}; align the region with the chunks, or pass safe_chunks=False (zarrpp's "
                         "partial-chunk writes keep both parts on stores that condition writes)")
    if not z.store.supports_conditional_writes:
        st = z.store
        named = f"a store over a {type(st.mapping).__name__}" if hasattr(st, "mapping") else f"the store {st}"
        raise ValueError(f"{where}, and {named} cannot condition a write on what is stored, so one task's part of "
                         "that chunk would be lost; align the region with the chunks")


def _cut(z: Array, dims: Tuple[str, ...], box: Tuple[slice, ...]) -> Optional[Tuple[str, slice, Set[int]]]:
    """The first dimension along which ``box`` starts or ends inside a stored object, the box's
    slice there and the objects' starts; None when it cuts none."""
    for dim, b, sizes, (lo, hi) in zip(dims, box, z.write_chunk_sizes, z.domain):
        bounds, at_end = {lo}, lo
        for n in sizes:
            at_end += n
            bounds.add(at_end)
        if any(at not in bounds and at != hi for at in (b.start, b.stop)):
            return dim, b, bounds
    return None


def _planned(g: Group, ds: xr.Dataset, region: Mapping[Hashable, slice], safe_chunks: bool = True,
             write_empty: Optional[bool] = None) -> List[Tuple[Array, Tuple[slice, ...], Any]]:
    """Each variable's array, box and values (encoded as the stored variable is, checked), before
    anything is written."""
    stored = {_decode_variable_name(k): z for k, z in g.arrays()}
    missing = sorted(str(n) for n in ds.variables if n not in stored)
    if missing:
        raise ValueError(f"region writes go into stored variables; {missing} are not in the stored dataset (write "
                         "them first, with compute=False or a whole write)")
    extent = _dataset_extent(g)
    fixed = {name: _stored_encoding(stored[name]) for name in ds.variables}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", xr.SerializationWarning)  # lossy casts are refused below
        warnings.simplefilter("ignore", RuntimeWarning)
        variables, _ = _encode(ds, None, fixed, g.zarr_format)
    plan = []
    for name, v in variables.items():
        z = stored[name]
        empty = write_empty if write_empty is not None else ds.variables[name].encoding.get("write_empty_chunks")
        if empty is not None:  # a handle setting: whether chunks equal to the fill value are stored
            z = z.with_config({"write_empty_chunks": bool(empty)})
        dims = _dimension_names(str(name), z)
        if tuple(map(str, v.dims)) != dims:
            raise ValueError(f"variable {name!r} already exists with different dimension names {dims} != "
                             f"{tuple(map(str, v.dims))}")
        box = _box(name, v, dims, region, extent)
        target = np.dtype(z.dtype)
        if hasattr(v.data, "dask"):
            _check_aligned(name, z, dims, box, safe_chunks)
            plan.append((z, box, v.data.astype(target) if target.kind != "O" else v.data))
            continue
        vals = np.asarray(v.values)
        vals = vals.astype(target) if target.kind != "O" else vals.astype(object)
        _check_round_trip("region", name, ds.variables[name], v, vals, fixed[name])
        plan.append((z, box, vals))
    return plan


def write_region(g: Group, ds: xr.Dataset, region: Any, compute: bool, safe_chunks: bool = True,
                 write_empty: Optional[bool] = None) -> Any:
    """Writes ``ds`` into the part ``region`` of the dataset stored in ``g`` (None: all of it);
    nothing but chunks changes. ``compute=False``: Dask-backed variables are written by the
    ``dask.delayed`` returned, in-memory ones now (as xarray's writer does)."""
    if region is None:  # the whole dataset (compute=False's data)
        plan = _planned(g, ds, {}, write_empty=write_empty)
    else:
        if isinstance(region, str) and region != "auto":
            raise ValueError(f"region must be a dict of slices or 'auto', got {region!r}")
        resolved = _auto_region(g, ds, _dataset_extent(g)) if isinstance(region, str) else region
        _checked_region(ds, resolved)
        plan = _planned(g, ds, resolved, safe_chunks, write_empty)
    import dask
    from .dask import to_zarrpp as dask_to_zarrpp
    for z, box, vals in plan:  # in memory: written now, as xarray's writer does even with compute=False
        if not hasattr(vals, "dask"):
            z.coords[box] = vals
    writes = [dask_to_zarrpp(vals, z, region=list(box), compute=False)
              for z, box, vals in plan if hasattr(vals, "dask")]
    if not compute:
        return dask.delayed(lambda *_: g)(*writes)
    dask.compute(*writes)
    return g
