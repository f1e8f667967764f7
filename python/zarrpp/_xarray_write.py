"""``to_zarrpp``: writing an xarray Dataset to a zarrpp group, or growing a stored one."""
from __future__ import annotations

from typing import Any, Dict, Hashable, Mapping, Optional, Set, Tuple

import xarray as xr
from xarray.backends.api import _validate_dataset_names
from xarray.backends.common import _encode_variable_name

from ._group import Group, open_group
from ._xarray_common import DIMENSIONS_ATTR, _dimension_names, _extent, _open_group, _record_extent
from ._xarray_encode import _attrs_for, _create_variable, _encode, _json_value
from ._xarray_grow import _grow
from ._xarray_region import write_region


def to_zarrpp(ds: xr.Dataset, store: Any, *, mode: Optional[str] = None, group: Optional[str] = None,
              encoding: Optional[Mapping[Hashable, Mapping[str, Any]]] = None, append_dim: Optional[str] = None,
              prepend_dim: Optional[str] = None, storage_options: Optional[Dict[str, Any]] = None,
              zarr_format: Optional[int] = None, consolidated: Optional[bool] = None,
              zarr_version: Optional[int] = None, compute: bool = True, region: Any = None, chunk_store: Any = None,
              synchronizer: Any = None, safe_chunks: bool = True, write_empty_chunks: Optional[bool] = None) -> Group:
    """Writes ``ds`` to a zarrpp group at ``store`` (a path, ``s3://`` URL or zarrpp store).

    ``mode``: "w-" (default; fail if something is there), "w" (replace), "a" (add or overwrite
    variables). ``encoding``: per variable, ``chunks``, ``shards``, ``compressors``, ``filters``,
    ``dtype``, ``_FillValue``, ``units``, ``calendar``, ``scale_factor``, ``add_offset``.
    ``append_dim``/``prepend_dim``: grow every stored variable having that dimension at its end /
    in front (coordinates included), one metadata step per array; the new data is encoded as the
    stored variables are, and mismatches (other variables, dimensions, shapes, values the stored
    encoding cannot hold) are refused before anything changes. ``zarr_format``: 3 or 2 (as xarray's
    own zarr engine writes Zarr v2: ``_ARRAY_DIMENSIONS``, the missing value as the fill value,
    fixed-width strings); by default the format of the group written into, else 3 (``zarr_version``:
    xarray 2023's name for it). ``consolidated``: as xarray's ``to_zarr``, the store's consolidated
    metadata is written after the dataset unless False (zarrpp keeps it current from then on).
    ``region``: a dict of slices per dimension (or "auto": where the Dataset's index coordinates
    are in the stored ones) into which ``ds`` is written, changing no metadata (mode "r+" by
    default; the variables must be stored; xarray's checks). ``compute=False``: the metadata is
    written now, the data by the ``dask.delayed`` returned. ``chunk_store`` and ``synchronizer``
    are refused unless None. ``safe_chunks``: xarray's rule, Dask blocks that straddle the Zarr chunks
    given in encoding are refused unless False (zarrpp's partial-chunk writes are safe on stores
    that lock). ``write_empty_chunks``: whether chunks equal to the fill value are stored (also an
    encoding key per variable; by default zarrpp.config's). Returns the group (or the delayed)."""
    zarr_format = _written_format(zarr_format, zarr_version, chunk_store, synchronizer)
    if append_dim is not None and prepend_dim is not None:
        raise ValueError("give append_dim or prepend_dim, not both")
    growing = append_dim or prepend_dim
    if mode is None:
        mode = "a" if growing else "r+" if region is not None else "w-"
    if region is not None:
        return _region_write(ds, store, group, storage_options, mode, region, growing, compute, safe_chunks,
                             write_empty_chunks)
    if growing and not compute:
        raise NotImplementedError("to_zarrpp: compute=False with append_dim/prepend_dim is not supported yet: the "
                                  "growth and its data are written together")
    if growing and mode not in ("a", "r+"):
        raise ValueError(f"cannot set {'append_dim' if append_dim else 'prepend_dim'} unless mode='a' or mode=None "
                         f"(got mode={mode!r})")
    if mode not in ("w", "w-", "a", "r+"):
        raise ValueError(f"mode must be 'w', 'w-', 'a' or 'r+', got {mode!r}")
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"to_zarrpp: expected an xarray.Dataset, got {type(ds).__name__}")
    if zarr_format not in (None, 2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    if growing:
        g = _target_group(store, group, storage_options, mode, True, zarr_format)
        _grow(g, ds, growing, prepend_dim is not None, encoding)
    else:
        fmt = zarr_format if zarr_format is not None else _existing_format(store, group, storage_options, mode)
        variables, new_attrs = _rehearse(ds, encoding, fmt, safe_chunks)
        if write_empty_chunks is not None:
            for v in variables.values():
                v.encoding["write_empty_chunks"] = write_empty_chunks
        g = _target_group(store, group, storage_options, mode, False, fmt)
        _write_dataset(g, ds, variables, new_attrs, mode, set(encoding or {}), write=compute)
    if consolidated is not False:
        _open_group(store, None, storage_options, mode="r+").consolidate_metadata()
    # compute=False: the metadata is written; the data, as region writes of the whole dataset
    return g if compute else write_region(g, ds, None, False, write_empty=write_empty_chunks)


def _region_write(ds: xr.Dataset, store: Any, group: Optional[str], storage_options: Optional[Dict[str, Any]],
                  mode: str, region: Any, growing: Any, compute: bool, safe_chunks: bool,
                  write_empty: Optional[bool]) -> Any:
    """``region=``: into the stored dataset, changing no metadata (xarray's checks first)."""
    if mode not in ("a", "r+"):
        raise ValueError("cannot set region unless mode='a', mode='r+' or mode=None")
    if growing:
        raise ValueError(f"cannot list the same dimension in both ``append_dim`` and ``region`` with to_zarr(), got "
                         f"{growing} (a region write changes no dimension's size)")
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"to_zarrpp: expected an xarray.Dataset, got {type(ds).__name__}")
    _validate_dataset_names(ds)
    g = _target_group(store, group, storage_options, "r+", False, None)
    return write_region(g, ds, region, compute, safe_chunks, write_empty)


def _written_format(zarr_format: Optional[int], zarr_version: Optional[int], chunk_store: Any,
                    synchronizer: Any) -> Optional[int]:
    """xarray's ``to_zarr`` keywords zarrpp does not take, refused by name; the format asked for."""
    if chunk_store is not None:
        raise ValueError("to_zarrpp: chunk_store= is not supported: zarrpp writes each array's chunks to the store "
                         "holding its metadata")
    if synchronizer is not None:
        raise ValueError("to_zarrpp: synchronizer= is not taken: zarrpp's stores order concurrent writes themselves")
    if zarr_version is not None and zarr_format is not None and zarr_version != zarr_format:
        raise ValueError(f"zarr_version={zarr_version} and zarr_format={zarr_format} disagree")
    return zarr_format if zarr_format is not None else zarr_version


def _existing_format(store: Any, group: Optional[str], storage_options: Optional[Dict[str, Any]],
                     mode: str) -> int:
    """The format of what is kept: the group written into (modes "a", "r+"), or the root a group
    is created or replaced in; else 3."""
    if mode not in ("a", "r+") and not group:
        return 3
    try:
        root = _open_group(store, None, storage_options, mode="r")
    except (FileNotFoundError, ValueError):
        return 3
    node = root[group] if group and group in root and mode in ("a", "r+") else root
    return node.zarr_format if isinstance(node, Group) else 3


def _rehearse(ds: xr.Dataset, encoding: Optional[Mapping[Hashable, Mapping[str, Any]]], zarr_format: int,
              safe_chunks: bool = True) -> Tuple[Dict[Hashable, xr.Variable], Dict[str, Any]]:
    """Everything that can be refused is, before the store is touched (mode "w" replaces what is
    there): the encoding, names, attributes, and each array's creation, rehearsed in memory."""
    _validate_dataset_names(ds)  # xarray's rule: names are non-empty text, or None
    variables, attrs = _encode(ds, encoding, zarr_format=zarr_format, safe_chunks=safe_chunks)
    for name in variables:
        if "/" in _array_name(name, zarr_format):
            raise ValueError(f"variable name {name!r} cannot name a zarr array (it holds '/')")
    new_attrs = {str(k): _json_value(str(k), x) for k, x in attrs.items()}
    from .storage import MemoryStore
    _check_attributes(new_attrs, variables)
    rehearsal = open_group(MemoryStore(), mode="w", zarr_format=zarr_format)
    rehearsal.attrs.update(new_attrs)
    for name, v in variables.items():
        _create_variable(rehearsal, _array_name(name, zarr_format), v, dict(v.encoding), write=False)
    return variables, new_attrs


def _check_attributes(new_attrs: Dict[str, Any], variables: Dict[Hashable, xr.Variable]) -> None:
    """An attribute value JSON cannot hold is refused with xarray's words, then zarrpp's reason."""
    from .storage import MemoryStore
    probe = open_group(MemoryStore(), mode="w")
    held = [("the dataset's", new_attrs)] + [(f"variable {n!r}'s", {k: x for k, x in _attrs_for(v).items()
                                                                    if k != "_FillValue"})
                                             for n, v in variables.items()]
    for whose, attrs in held:
        try:
            probe.attrs.update(attrs)
        except TypeError as e:
            raise TypeError(f"Invalid attribute in Dataset.attrs. ({whose}): {e}") from e


def _array_name(name: Hashable, zarr_format: int) -> str:
    """The array a variable is stored in: its name; a variable named None as xarray stores it
    ("__values__", which Zarr v3 reserves: refused there)."""
    if name is None and zarr_format == 3:
        raise ValueError("a variable named None is stored by xarray as '__values__', a name Zarr v3 reserves; "
                         "give the variable a name, or write Zarr v2 (zarr_format=2)")
    return str(_encode_variable_name(name))


def _target_group(store: Any, group: Optional[str], storage_options: Optional[Dict[str, Any]], mode: str,
                  growing: bool, zarr_format: Optional[int]) -> Group:
    """The group written into, opened or created as ``mode`` says, in ``zarr_format``."""
    fmt = None if growing else zarr_format
    if not group:
        top = _open_group(store, None, storage_options, mode="r+" if growing else mode, zarr_format=fmt)
        _check_format(top, zarr_format)
        return top
    from .errors import ContainsGroupError
    root = _open_group(store, None, storage_options, mode="r+" if growing or mode == "r+" else "a", zarr_format=fmt)
    _check_format(root, zarr_format)
    exists = group in root
    if growing or mode == "r+":
        if not exists:
            raise FileNotFoundError(f"group {group!r} does not exist "
                                    f"(mode {mode!r} writes into an existing dataset)")
        g = root[group]
    elif mode == "w":
        g = root.create_group(group, overwrite=True)
    elif exists and mode == "w-":
        raise ContainsGroupError(f"group {group!r} already exists (mode='w-'); use mode='w' to replace it")
    else:
        g = root[group] if exists else root.create_group(group)
    if not isinstance(g, Group):
        raise ValueError(f"group={group!r} is an array, not a group")
    _check_format(g, zarr_format)
    return g


def _check_format(g: Group, zarr_format: Optional[int]) -> None:
    if zarr_format is not None and g.zarr_format != zarr_format:
        raise ValueError(f"zarr_format={zarr_format}: the group written into is Zarr v{g.zarr_format} (a dataset is "
                         f"one format; convert a v2 one with zarrpp.convert_to_v3)")


def _conflicting_length(g: Group, name: Hashable, dim: str, n: int, stored: int) -> str:
    """Why a variable of another length along a stored dimension is refused: every variable of a
    dataset has one length along each dimension. Growing helps only when there is more of it, and
    then only the new elements are written (at the front only on Zarr v3)."""
    why = (f"variable {name!r} has different dimension sizes than the stored dataset along {dim!r}: {n} elements, "
           f"the stored dataset {stored} (a dataset's variables share each dimension's length)")
    grow = f"append_dim={dim!r}" if g.zarr_format == 2 else f"append_dim={dim!r} (or prepend_dim={dim!r})"
    if n < stored:
        return why + f"; give it all {stored} elements along {dim!r}, or add these {n} to them with {grow}"
    return why + f"; to add {n - stored} elements along {dim!r}, write only the new ones, with {grow}"


def _check_existing(g: Group, variables: Dict[Hashable, xr.Variable], mode: str, given: Set[Hashable]) -> None:
    """As xarray's to_zarr, into an existing dataset (modes "a", "r+"): a stored variable keeps its
    dimensions and its encoding; "r+" adds no variable."""
    existing = dict(g.arrays())
    new_names = [n for n in variables if _array_name(n, g.zarr_format) not in existing]
    if mode == "r+" and new_names:
        raise ValueError(f"dataset contains non-pre-existing variables {new_names}, which mode='r+' does not allow "
                         "(it only overwrites existing variables); to add variables, use mode='a'")
    for name, v in variables.items():
        stored = _array_name(name, g.zarr_format)
        if stored not in existing:
            continue
        if name in given:
            raise ValueError(f"variable {name!r} already exists, but encoding was provided: it keeps the encoding "
                             "it was written with (write with mode='w' to replace the dataset)")
        dims = _dimension_names(stored, existing[stored])
        if tuple(map(str, v.dims)) != dims:
            raise ValueError(f"variable {name!r} already exists with different dimension names {dims} != "
                             f"{tuple(map(str, v.dims))}, but changing a variable's dimensions is not supported "
                             "(write with mode='w' to replace the dataset)")


def _write_dataset(g: Group, ds: xr.Dataset, variables: Dict[Hashable, xr.Variable], new_attrs: Dict[str, Any],
                   mode: str, given: Set[Hashable], write: bool = True) -> None:
    """Creates each new variable's array in ``g`` and writes the stored ones' data into theirs, as
    xarray's to_zarr: a stored variable keeps its metadata (attributes, encoding); the dataset's
    attributes change with mode "a", not "r+". Then the extent."""
    existing = set(g.array_keys())
    if existing:
        _check_existing(g, variables, mode, given)
    # Into an existing dataset: each dimension keeps its size, and new or replaced variables take
    # the dataset's coordinates along it (its extent may start below 0 after a prepend).
    extent = _extent(g) if existing else {}
    if existing:
        recorded = g.attrs.get(DIMENSIONS_ATTR)
        if isinstance(recorded, dict):
            extent.update({str(k): [int(v[0]), int(v[1])] for k, v in recorded.items()})
        for name, v in variables.items():
            for dim, n in zip(map(str, v.dims), v.shape):
                if dim in extent and extent[dim][1] - extent[dim][0] != n:
                    raise ValueError(_conflicting_length(g, name, dim, n, extent[dim][1] - extent[dim][0]))
    kept = [name for name in variables if _array_name(name, g.zarr_format) in existing]
    if kept and write:
        # encoded as stored, checked, before any new array is made
        write_region(g, xr.Dataset({n: ds.variables[n] for n in kept}), None, True)
    for name, v in variables.items():
        if name in kept:
            continue
        lower = tuple(extent[str(d)][0] if str(d) in extent else 0 for d in v.dims)
        _create_variable(g, _array_name(name, g.zarr_format), v, dict(v.encoding), write=write,
                         lower_bound=lower if any(lower) else None)
    if mode == "a":
        g.attrs.update(new_attrs)
    elif mode != "r+":
        g.attrs.put(new_attrs) if hasattr(g.attrs, "put") else g.attrs.update(new_attrs)
    _record_extent(g)
