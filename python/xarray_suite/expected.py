"""What is known of each of xarray's zarr backend tests in the zarrpp variants (see conftest.py):
tests left out (they cannot measure zarrpp here), and tests expected to fail, each with its reason
(docs/compatibility.md, "xarray's own zarr tests"). A test listed as failing that passes fails the
run (strict), so this list only shrinks as zarrpp improves."""
from __future__ import annotations

import fnmatch
from typing import Dict, Optional

ZARRPP_WRITES = ("TestZarrppWritesV3", "TestZarrppWritesV2")
XARRAY_WRITES = ("TestXarrayWritesZarrppReads",)

_NETCDF = "writes or reads a netCDF file (netCDF4 or scipy, not installed with Debian's python3-xarray here)"
LEFT_OUT: Dict[str, str] = {
    "test_roundtrip_example_1_netcdf": _NETCDF,
    "test_grid_mapping_and_bounds_are_not_coordinates_in_file": _NETCDF,
    "test_coordinates_encoding": _NETCDF,
}

_COMPRESSOR = ("a Zarr v3 array's encoding holds 'compressors' (zarr-python 3's form), not zarr-python 2's "
               "'compressor' the test reads")

FAILING_WHEN_ZARRPP_WRITES: Dict[str, str] = {
    "test_to_zarr_append_compute_false_roundtrip": "compute=False with append_dim is refused (growth and its data "
                                                   "are written together)",
    "test_with_chunkstore": "chunk_store= is refused: zarrpp keeps chunks beside their metadata",
}

FAILING_WHEN_ZARRPP_WRITES_V3: Dict[str, str] = {
    "test_append_string_length_mismatch_raises*": "chosen: longer strings are appended (a v3 string array has no "
                                                  "width) where xarray refuses them",
    "test_compressor_encoding": _COMPRESSOR,
    "test_check_encoding_is_consistent_after_append": _COMPRESSOR,
    "test_roundtrip_None_variable": "refused: xarray stores a variable named None as '__values__', a name "
                                    "Zarr v3 reserves",
}

FAILING_WHEN_XARRAY_WRITES: Dict[str, str] = {
    "test_with_chunkstore": "chunk_store= is refused: zarrpp reads chunks beside their metadata",
}


def _match(table: Dict[str, str], name: str) -> Optional[str]:
    for pattern, why in table.items():
        if fnmatch.fnmatchcase(name, pattern):
            return why
    return None


def left_out(cls: str, name: str) -> Optional[str]:
    """Why a test is left out in every variant, or None."""
    return _match(LEFT_OUT, name)


def failing(cls: str, name: str) -> Optional[str]:
    """Why a test is expected to fail in the variant ``cls``, or None."""
    if cls in ZARRPP_WRITES:
        v3 = _match(FAILING_WHEN_ZARRPP_WRITES_V3, name) if cls == "TestZarrppWritesV3" else None
        return v3 or _match(FAILING_WHEN_ZARRPP_WRITES, name)
    return _match(FAILING_WHEN_XARRAY_WRITES, name)
