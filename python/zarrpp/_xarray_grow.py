"""Growing a stored xarray dataset along one dimension, at its end or in front: every check before
anything changes, one metadata step per array, and the growth undone should a step fail."""
from __future__ import annotations

import warnings
from typing import Any, Dict, Hashable, List, Mapping, Optional, Tuple

import numpy as np
import xarray as xr

from ._array import Array
from ._group import Group
from ._xarray_common import _dimension_names, _record_extent
from ._xarray_encode import _check_round_trip, _encode, _stored_encoding


def _grow(g: Group, ds: xr.Dataset, dim: str, front: bool,
          encoding: Optional[Mapping[Hashable, Mapping[str, Any]]]) -> None:
    word = "prepend_dim" if front else "append_dim"
    stored = _check_growth(g, ds, dim, front, encoding, word)
    fixed = {name: _stored_encoding(stored[str(name)]) for name in ds.variables}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", xr.SerializationWarning)  # lossy casts are refused below
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow in a cast: refused below too
        variables, _ = _encode(ds, None, fixed, g.zarr_format)
    plan = [_plan_variable(word, dim, name, v, stored[str(name)], ds.variables[name], fixed[name])
            for name, v in variables.items()]
    _apply_growth(plan, dim, front)
    for z, dims, vals, lazy in plan:
        if dim not in dims:
            z[...] = vals
    _record_extent(g)


def _check_growth(g: Group, ds: xr.Dataset, dim: str, front: bool,
                  encoding: Optional[Mapping[Hashable, Mapping[str, Any]]], word: str) -> Dict[str, Array]:
    """Refuses a growth that would leave the dataset inconsistent; the stored arrays by name."""
    if encoding:
        raise ValueError(f"{word}: variable {sorted(map(str, encoding))[0]!r} already exists, but encoding was "
                         "provided: new data is encoded as the stored variables are (their dtype, units, calendar, "
                         "scale factor and fill value)")
    if dim not in ds.dims:
        raise ValueError(f"{word}={dim!r} does not match any existing dataset dimensions: the data to add has no "
                         f"dimension {dim!r} (it has {sorted(map(str, ds.dims))})")
    stored = {name: z for name, z in g.arrays()}
    new = sorted(str(n) for n in ds.variables if str(n) not in stored)
    if new:
        raise ValueError(f"{word}: variables {new} are not in the stored dataset; growing writes the variables it "
                         "already has")
    with_dim = {name for name, z in stored.items() if dim in _dimension_names(name, z)}
    missing = sorted(with_dim - {str(n) for n in ds.variables})
    if missing:
        raise ValueError(f"{word}: the stored variables {missing} have dimension {dim!r} but are not in the dataset "
                         "(they would fall behind)")
    if front and any(stored[n].zarr_format == 2 for n in with_dim):
        raise ValueError(f"{word}: the dataset is Zarr v2, whose arrays cannot store a lower bound (growing in front "
                         "needs one); convert it to Zarr v3 first (zarrpp.convert_to_v3, or the CLI's convert)")
    return stored


def _check_shape(word: str, dim: str, name: Hashable, dims: Tuple[str, ...], vals: Any, z: Array) -> None:
    """Only ``dim`` may differ between the new data and the stored array (nothing, without it)."""
    if dim in dims:
        axis = dims.index(dim)
        other = tuple(n for d, n in enumerate(z.shape) if d != axis)
        mine = tuple(n for d, n in enumerate(vals.shape) if d != axis)
        if other != mine:
            differ = [d for d, (p, q) in enumerate(zip(vals.shape, z.shape)) if d != axis and p != q]
            raise ValueError(f"{word}: variable {name!r} has shape {vals.shape}, the stored one {z.shape}: "
                             f"dimension {dims[differ[0]]!r} differs (only {dim!r} may)")
    elif vals.shape != z.shape:
        differ = [d for d, (p, q) in enumerate(zip(vals.shape, z.shape)) if p != q]
        raise ValueError(f"{word}: variable {name!r} (without {dim!r}) has shape {vals.shape}, the stored one "
                         f"{z.shape}: dimension {dims[differ[0]]!r} differs")


def _plan_variable(word: str, dim: str, name: Hashable, v: xr.Variable, z: Array, original: xr.Variable,
                   enc: Mapping[str, Any]) -> Tuple[Array, Tuple[str, ...], Any, bool]:
    """One variable's growth, checked: (array, its dimensions, the values to add, whether lazy)."""
    dims = _dimension_names(str(name), z)
    if tuple(map(str, v.dims)) != dims:
        raise ValueError(f"{word}: variable {name!r} has dimensions {tuple(v.dims)}, the stored one {dims}")
    target = np.dtype(z.dtype)
    lazy = _is_dask(v.data) and dim in dims and target.kind != "O"
    vals = v.data if lazy else np.asarray(v.values)
    given = original.dtype  # before the stored encoding's dtype cut it to the stored width
    if target.kind in "SU" and given.kind == target.kind and given.itemsize > target.itemsize:
        raise ValueError(f"{word}: Mismatched dtypes for variable {name!r} between the stored dataset and the data "
                         f"to add: the stored array holds {target}, the new values {given} (fixed-width strings "
                         "cannot hold longer ones; a Zarr v3 string array can)")
    if target.kind != "O" and not np.can_cast(vals.dtype, target, casting="same_kind"):
        raise ValueError(f"{word}: variable {name!r} holds {vals.dtype}, the stored array {target} "
                         "(refusing a lossy conversion)")
    _check_shape(word, dim, name, dims, vals, z)
    if lazy:
        # Computed on the workers; each block is checked there before it is written.
        vals = vals.astype(target).map_blocks(_checked_block, _as_dask(original.data, vals), word=word,
                                              var=str(name), dims=v.dims, attrs=dict(v.attrs), enc=enc,
                                              dtype=target)
    else:
        if target.kind != "O":
            vals = vals.astype(target)
        _check_round_trip(word, name, original, v, vals, enc)
        if target.kind == "O":
            vals = vals.astype(object)
    return z, dims, vals, lazy


def _apply_growth(plan: List[Tuple[Array, Tuple[str, ...], Any, bool]], dim: str, front: bool) -> None:
    """Everything checked that can be before computing: the arrays grow, one metadata step each.
    Dask-backed data first (a domain expansion each, whose elements the workers write by
    coordinates), then the in-memory data (prepend/append: data and metadata); should anything
    fail, the growth done so far is undone. The variables without ``dim`` are the caller's."""
    writes: List[Any] = []
    grown: List[Tuple[Array, int, int]] = []  # (array, axis, elements added)
    try:
        for z, dims, vals, lazy in plan:
            if lazy:
                writes.append(_expand_for_workers(z, dims.index(dim), vals, front, grown))
        if writes:
            import dask
            dask.compute(*writes)
        for z, dims, vals, lazy in plan:
            if not lazy and dim in dims:
                axis = dims.index(dim)
                if front:
                    z.prepend(vals, axis=axis)
                else:
                    z.append(vals, axis=axis)
                grown.append((z, axis, vals.shape[axis]))
    except BaseException:
        for z, axis, n in reversed(grown):
            z.expand_domain(before=-n if front else 0, after=0 if front else -n, axis=axis)
        raise


def _expand_for_workers(z: Array, axis: int, vals: Any, front: bool, grown: List[Tuple[Array, int, int]]) -> Any:
    """Expands ``z``'s domain for Dask-backed ``vals`` and returns the delayed write of them."""
    from .dask import to_zarrpp as dask_to_zarrpp
    n = vals.shape[axis]
    dom = z.expand_domain(before=n if front else 0, after=0 if front else n, axis=axis)
    grown.append((z, axis, n))
    lo = dom[axis][0] if front else dom[axis][1] - n
    region = tuple(slice(lo, lo + n) if d == axis else slice(None) for d in range(z.ndim))
    return dask_to_zarrpp(vals, z, region=region, compute=False)


def _is_dask(data: Any) -> bool:
    return type(data).__module__.startswith("dask.") and hasattr(data, "chunks") and hasattr(data, "dask")


def _as_dask(data: Any, like: Any) -> Any:
    import dask.array as da
    return data.rechunk(like.chunks) if _is_dask(data) else da.from_array(np.asarray(data), chunks=like.chunks)


def _checked_block(stored: np.ndarray, original: np.ndarray, *, word: str, var: str, dims: Any, attrs: Dict[str, Any],
                   enc: Mapping[str, Any]) -> np.ndarray:
    encoded = xr.Variable(dims, stored, attrs)
    _check_round_trip(word, var, xr.Variable(dims, original), encoded, stored, enc)
    return stored
