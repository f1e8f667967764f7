"""What the xarray backend and writer share: dimension names, attribute values, and each
dimension's extent as the group records it."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ._array import Array
from ._group import Group, open_group
from .errors import FormatMismatchError

#: The group attribute where zarrpp keeps each dimension's coordinate range, {dimension: [lower,
#: upper]}, so a dataset grown in front keeps its coordinates.
DIMENSIONS_ATTR = "_zarrpp_dimensions"
_V2_DIMS = "_ARRAY_DIMENSIONS"
# Attributes holding a value of the variable's type: NaN and infinities are stored as Zarr v3
# spells them in fill_value ("NaN", "Infinity", "-Infinity"), since JSON has no such numbers.
_VALUE_ATTRS = ("_FillValue", "missing_value", "valid_min", "valid_max")
_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _dimension_names(name: str, z: Array) -> Tuple[str, ...]:
    names = z.metadata.get("dimension_names") if z.zarr_format == 3 else z.attrs.get(_V2_DIMS)
    if names is None and z.zarr_format == 3:
        names = z.attrs.get(_V2_DIMS)
    if names is None:
        raise ValueError(f"zarrpp backend: array {name!r} has no dimension names (Zarr v3 dimension_names, or the "
                         f"{_V2_DIMS} attribute in Zarr v2): xarray needs a name for each dimension")
    names = list(names)
    if len(names) != z.ndim or not all(isinstance(n, str) for n in names):
        raise ValueError(f"zarrpp backend: array {name!r} has dimension names {names!r}, not one name per "
                         f"dimension ({z.ndim})")
    return tuple(names)


def _decode_attr(key: str, value: Any) -> Any:
    if key in _VALUE_ATTRS and isinstance(value, str) and value in _SPECIAL:
        return _SPECIAL[value]
    return value


def _fill_attr(z: Array, value: Any) -> Any:
    """A _FillValue attribute's value. On Zarr v3, xarray stores it in its own encoding (floats as
    base64 of the float64, ...; the core reads it); plain JSON (zarrpp's earlier form, and every v2
    attribute) is read as it is."""
    if z.zarr_format == 3 and z.dtype.kind == "O" and z._type_name != "string":
        raw = z._xarray_fill_from_attribute(value)  # variable-length bytes: base64, as xarray writes it
        if raw is None:
            raise ValueError(f"zarrpp backend: the _FillValue attribute {value!r} of the bytes array '{z.path}' is "
                             "not base64 (xarray's encoding of a bytes fill value), so which elements are missing "
                             "is unknown; rewrite the attribute as base64 of the missing value")
        return raw
    if z.zarr_format == 3 and z.dtype.kind != "O":
        raw = z._xarray_fill_from_attribute(value)
        if raw is not None:
            fv = np.frombuffer(raw, dtype=z.dtype)[0]
            return fv if z.dtype.kind in "mM" else fv.item()  # dates stay NumPy's, as on v2
    return _decode_attr("_FillValue", value)


def _open_group(filename_or_obj: Any, group: Optional[str], storage_options: Optional[Dict[str, Any]],
                mode: str = "r", zarr_format: Optional[int] = None) -> Group:
    if isinstance(filename_or_obj, Group):
        g = filename_or_obj
    else:
        src = filename_or_obj.__fspath__() if hasattr(filename_or_obj, "__fspath__") else filename_or_obj
        try:
            g = open_group(src, mode=mode, storage_options=storage_options, zarr_format=zarr_format)
        except FormatMismatchError:
            # The writer checks the format itself, saying what to do about it.
            g = open_group(src, mode=mode, storage_options=storage_options)
    if group:
        if group not in g:
            from .errors import GroupNotFoundError
            raise GroupNotFoundError(f"no group {group!r} in {filename_or_obj!r}")
        node = g[group]
        if not isinstance(node, Group):
            raise ValueError(f"group={group!r} is an array, not a group")
        g = node
    return g


def _extent(g: Group) -> Dict[str, List[int]]:
    """Each dimension's extent: the intersection of the domains of the arrays having it."""
    extent: Dict[str, List[int]] = {}
    for name, z in g.arrays():
        try:
            dims = _dimension_names(name, z)
        except ValueError:
            continue
        for dim, (lo, hi) in zip(dims, z.domain):
            if dim in extent:
                extent[dim] = [max(extent[dim][0], lo), min(extent[dim][1], hi)]
            else:
                extent[dim] = [lo, hi]
    return extent


def _record_extent(g: Group) -> None:
    """Records each dimension's extent in the group's attributes. Another process growing the
    dataset at the same time may record its view after ours: so look again after writing, and
    record again while the arrays say otherwise. Not in Zarr v2 groups, whose readers (xarray's
    zarr engine) would show it as a dataset attribute."""
    if g.zarr_format == 2:
        return
    extent = _extent(g)
    for _ in range(10):
        g.attrs[DIMENSIONS_ATTR] = extent
        now = _extent(g)
        if now == extent:
            return
        extent = now
