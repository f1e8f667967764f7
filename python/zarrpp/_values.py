"""Values and data types for Python: dtype= through the binding, fill values, NumPy's casting of
written values, and fields of structured types."""
from __future__ import annotations

import warnings
from typing import Any, Optional, Tuple

import numpy as np

from . import _zarrpp


def _parse_dtype(dtype: Any) -> Tuple[np.dtype, str, str]:
    """(native NumPy dtype, Zarr data type name, endian of the bytes codec) for ``dtype=``, as the
    binding reads it (``parse_dtype``). ``str`` / "string" and ``bytes`` / "bytes" are the
    variable-length types, held in NumPy as object arrays of str / bytes (as in zarr-python 3)."""
    np_dtype, name, endian = _zarrpp.parse_dtype(dtype)
    return np_dtype, name, endian


class _DefaultFillValue:
    """create_array's default fill_value: the data type's zero. An explicit None is that too on
    Zarr v3, and on Zarr v2 means no fill value ("fill_value": null), as in zarr-python 3."""

    def __repr__(self) -> str:
        return "DEFAULT_FILL_VALUE"


DEFAULT_FILL_VALUE: Any = _DefaultFillValue()


def _core_fill_value(fill_value: Any, zarr_format: Optional[int]) -> Any:
    if fill_value is DEFAULT_FILL_VALUE:
        return None
    if fill_value is None and zarr_format == 2:
        return _zarrpp.NO_FILL_VALUE
    return fill_value


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _python_numbers(value: Any, a: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Python numbers (scalars, lists) converted as ``np.asarray(value, dtype=dt)`` converts them
    in NumPy 2: an integer that does not fit an integer dtype is an OverflowError (never wrapped
    around or rounded through float64, as a list mixing small and huge integers would be)."""
    if dt.kind in "iu":
        objs = np.asarray(value, dtype=object).ravel() if a.dtype.kind in "fO" or a.dtype.kind in "iu" else None
        if objs is not None:
            info = np.iinfo(dt)
            for v in objs:
                if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and \
                        not info.min <= int(v) <= info.max:
                    raise OverflowError(f"Python integer {int(v)} out of bounds for {dt}")
        if a.dtype.kind in "Ofiu":
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return np.array(value, dtype=dt)
            except (TypeError, ValueError):
                return a
        return a
    if a.dtype.kind == "O" and a.size and all(isinstance(v, int) and not isinstance(v, bool) for v in a.ravel()):
        return np.array(value, dtype=dt)
    return a


def _pop_fields(selection: Any) -> Tuple[Any, Any]:
    """(fields, the rest) of ``z[...]``'s selection, as zarr-python 2 splits them: a string, or the
    strings of a tuple, name fields of a structured type; a list of strings names several."""
    if isinstance(selection, str):
        return selection, ()
    if isinstance(selection, list) and selection and all(isinstance(f, str) for f in selection):
        return selection, ()
    if not isinstance(selection, tuple) or not any(isinstance(f, str) for f in selection):
        return None, selection
    names = [f for f in selection if isinstance(f, str)]
    rest = tuple(f for f in selection if not isinstance(f, str))
    return (names[0] if len(names) == 1 else names), (rest[0] if len(rest) == 1 else rest)


def _fields_of(selection: Any, fields: Any) -> Tuple[Any, Any]:
    """``fields=``, or the fields named in ``z.oindex[...]`` / ``z.vindex[...]``'s selection."""
    if fields is not None:
        return fields, selection
    return _pop_fields(selection)


def _check_fields(fields: Any, dtype: np.dtype) -> None:
    if not isinstance(fields, (str, list, tuple)) or \
            (not isinstance(fields, str) and not all(isinstance(f, str) for f in fields)):
        raise IndexError(f"fields must be a field name or a list of them, not {fields!r}")
    if dtype.names is None:
        raise IndexError(f"fields {fields!r}: this array's dtype {dtype} has no fields")
    for f in [fields] if isinstance(fields, str) else fields:
        if f not in dtype.names:
            raise IndexError(f"field {f!r} is not one of this array's fields {list(dtype.names)}")


def _select_fields(values: Any, fields: Any) -> Any:
    """A field (its values; a subarray field adds its dimensions), or several fields as a packed
    structured array, of ``values``: what zarr-python 2 returns for ``fields=``."""
    a = np.asarray(values)
    if isinstance(fields, str):
        got = np.array(a[fields])
    else:
        fields = list(fields)
        got = np.empty(a.shape, dtype=np.dtype([(f, a.dtype[f]) for f in fields]))
        for f in fields:
            got[f] = a[f]
    # a scalar for one element (z[0, "a"]), a 0-d array where the core gave one (z[...] of 0-d)
    return got[()] if not isinstance(values, np.ndarray) and got.ndim == 0 else got


def _structured_value(value: Any, dt: np.dtype) -> np.ndarray:
    """``value`` (records, tuples, another structured array with these field names) as this
    structured dtype, by NumPy's assignment."""
    if isinstance(value, (np.ndarray, np.void)) and value.dtype.names is not None:
        if value.dtype.names != dt.names:
            raise TypeError(f"cannot store data of dtype {value.dtype} in a zarrpp array of dtype {dt}: "
                            f"the fields differ ({list(value.dtype.names)} against {list(dt.names or ())})")
        return np.asarray(value).astype(dt)
    return np.array(value, dtype=dt)


def cast_to(value: Any, dt: np.dtype) -> np.ndarray:
    """``value`` as a NumPy array of ``dt`` (native byte order), NumPy's assignment casting."""
    if dt.kind == "O":  # str / bytes elements: the core checks each one
        if isinstance(value, np.ndarray):
            return value if value.dtype.kind == "O" else value.astype(object)
        if isinstance(value, (bytes, bytearray, memoryview, str)):
            # one element (np.asarray would iterate a bytearray or memoryview)
            out = np.empty((), dtype=object)
            out[()] = bytes(value) if isinstance(value, (bytearray, memoryview)) else value
            return out
        return np.asarray(value, dtype=object)  # keeps bytes exactly (b"\x00" is not b"")
    if dt.fields is not None:
        return _structured_value(value, dt)
    if dt.kind in "USMm":
        # NumPy's own assignment (text cut to the width, dates converted between units, and
        # its refusals: floats or NaN into datetime64, years into minutes), into a buffer
        if isinstance(value, np.ndarray) and value.dtype == dt and value.dtype.isnative:
            return value
        out = np.empty(np.shape(value), dtype=dt)
        out[...] = value
        return out
    a = np.asarray(value)
    if not isinstance(value, (np.ndarray, np.generic)) and dt.kind in "iufcb":
        a = _python_numbers(value, a, dt)
    if a.dtype.kind in "OSUMm" or (a.dtype.kind == "V") != (dt.kind == "V"):
        raise TypeError(f"cannot store data of dtype {a.dtype} in a zarrpp array of dtype {dt}")
    if dt.kind == "V" and a.dtype.itemsize != dt.itemsize:
        raise TypeError(f"cannot store data of dtype {a.dtype} in a zarrpp array of dtype {dt}")
    if a.dtype != dt or not a.dtype.isnative:
        a = a.astype(dt, casting="unsafe")
    return a
