"""xarray's TestZarrDirectoryStore, its bodies untouched, in three variants: zarrpp writes Zarr v3
and reads; zarrpp writes Zarr v2 and reads; xarray (zarr-python 2) writes, zarrpp reads."""
from __future__ import annotations

from typing import Any

import pytest
import xarray as xr
from xarray.backends import plugins
from xarray.tests import test_backends as xt

import zarrpp.xarray as zx

_get_backend = plugins.get_backend


def _zarrpp_engine(engine: Any) -> Any:
    """The backend xarray looks up by name: zarrpp's for "zarr"."""
    if engine == "zarr":
        return zx.ZarrppBackendEntrypoint()
    return _get_backend(engine)


def _to_zarrpp(zarr_format: int) -> Any:
    def to_zarr(self: xr.Dataset, store: Any = None, **kwargs: Any) -> Any:
        return zx.to_zarrpp(self, store, zarr_format=zarr_format, **kwargs)
    return to_zarr


class _Variant:
    writes_format = 0  # 0: xarray writes

    @pytest.fixture(autouse=True)
    def _through_zarrpp(self, monkeypatch: Any) -> None:
        monkeypatch.setattr(plugins, "get_backend", _zarrpp_engine)
        if self.writes_format:
            monkeypatch.setattr(xr.Dataset, "to_zarr", _to_zarrpp(self.writes_format))


class TestZarrppWritesV3(_Variant, xt.TestZarrDirectoryStore):
    writes_format = 3


class TestZarrppWritesV2(_Variant, xt.TestZarrDirectoryStore):
    writes_format = 2


class TestXarrayWritesZarrppReads(_Variant, xt.TestZarrDirectoryStore):
    writes_format = 0
