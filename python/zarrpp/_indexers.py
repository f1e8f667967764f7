"""Indexers: ``z.oindex``, ``z.vindex``, ``z.blocks`` and ``z.coords``, each a name for one of an
array's selection methods."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

import numpy as np

if TYPE_CHECKING:  # annotations only: Array imports this module
    from ._array import Array


class _Indexer:
    def __init__(self, array: "Union[Array, CoordinateIndexer]", get: str, set_: str):
        self._array, self._get, self._set = array, get, set_

    def __getitem__(self, selection: Any) -> Any:
        return getattr(self._array, self._get)(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        getattr(self._array, self._set)(selection, value)


class CoordinateIndexer:
    """``z.coords[...]``: the array addressed by its domain's coordinates, as TensorStore does.

    Index ``i`` is the element at coordinate ``i`` whatever the lower bound is now, so a selection
    means the same elements before and after growth at either end (by this process or another);
    ``z[...]`` counts from the lower bound instead, so after a prepend it shifts. Negative numbers
    are coordinates (they do not count from the end), a missing slice bound is the domain's bound,
    and a coordinate outside the domain raises IndexError (never clamped). Integers, slices, 1-d
    integer arrays and 1-d boolean arrays select orthogonally (as ``oindex``); ``z.coords.vindex``
    takes points. When a selection falls outside the domain the handle knows, the metadata is
    re-read once (another process may have grown the array) before refusing.
    """

    def __init__(self, array: "Array"):
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array._get_coords(selection, "orthogonal")

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array._set(selection, value, "orthogonal", coords=True)

    @property
    def oindex(self) -> "CoordinateIndexer":
        return self

    @property
    def vindex(self) -> _Indexer:
        """Points by coordinates: integer arrays broadcast together, one element per point."""
        return _Indexer(self, "_get_points", "_set_points")

    def _get_points(self, selection: Any) -> np.ndarray:
        return self._array._get_coords(selection, "vindex")

    def _set_points(self, selection: Any, value: Any) -> None:
        self._array._set(selection, value, "vindex", coords=True)
