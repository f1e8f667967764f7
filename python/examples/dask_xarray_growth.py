"""Back-fill a time series in front on a Dask cluster, and read it with xarray.

    python3 python/examples/dask_xarray_growth.py [DIR] [--days N] [--plot FILE.png]

1. Writes an example dataset to DIR/weather.zarr: daily temperature at four stations from
   2024-01-01 (``zarrpp.xarray.to_zarrpp``), and opens it with ``xr.open_dataset(...,
   engine="zarrpp")``.
2. Starts a ``distributed.LocalCluster`` (two worker processes) and back-fills the N days before
   2024-01-01: one metadata step per variable extends its domain in front, then the workers compute
   the earlier days and write their slabs by coordinate in parallel, while another worker appends
   the days after the end. Nothing already stored is copied or moved.
3. Opens the dataset again and prints it (and plots it with matplotlib, when installed, to FILE).
"""
import argparse
import os
import shutil
import tempfile

import dask.array as da
import numpy as np
import pandas as pd
import xarray as xr
from distributed import Client, LocalCluster

import zarrpp
import zarrpp.xarray as zx

STATIONS = ["Oslo", "Lyon", "Sevilla", "Tromsø"]
MEAN = np.array([6.0, 12.0, 19.0, 3.0])  # mean temperature per station, °C
START = pd.Timestamp("2024-01-01")


def temperature(day_offsets):
    """A smooth seasonal model with a deterministic wiggle: (days, stations) in °C."""
    d = np.asarray(day_offsets, dtype="f8")[:, None]
    season = -9.0 * np.cos(2 * np.pi * (d + 10) / 365.25)
    wiggle = 1.5 * np.sin(d * 0.7 + np.arange(len(STATIONS))[None, :])
    return (MEAN[None, :] + season + wiggle).astype("f4")


def dataset(first_offset, days, lazy=False):
    """The stations' temperatures for `days` days from START + first_offset; with `lazy`, as a Dask
    array computed block by block on the workers."""
    if lazy:
        offsets = da.arange(first_offset, first_offset + days, chunks=30)
        temp = offsets.map_blocks(lambda b: temperature(b), new_axis=1, chunks=(offsets.chunks[0], (len(STATIONS),)),
                                  dtype="f4")
    else:
        temp = temperature(np.arange(first_offset, first_offset + days))
    return xr.Dataset(
        {"temperature": (("time", "station"), temp, {"units": "degC", "long_name": "daily mean air temperature"})},
        coords={"time": pd.date_range(START + pd.Timedelta(days=first_offset), periods=days, freq="D"),
                "station": STATIONS},
        attrs={"title": "zarrpp example: a weather series grown at both ends"})


def append_days(path, first_offset, days):
    """Runs on a worker: appends days after the end (their own xarray growth step)."""
    zx.to_zarrpp(dataset(first_offset, days), path, append_dim="time")
    return days


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", help="where to write weather.zarr (default: a temporary directory)")
    ap.add_argument("--days", type=int, default=366, help="days to back-fill in front (default 366)")
    ap.add_argument("--plot", help="save a plot here (needs matplotlib)")
    args = ap.parse_args()
    top = args.dir or tempfile.mkdtemp(prefix="zarrpp-weather-")
    os.makedirs(top, exist_ok=True)
    path = os.path.join(top, "weather.zarr")
    shutil.rmtree(path, ignore_errors=True)

    # 1. The dataset as it is today: 90 days from 2024-01-01.
    zx.to_zarrpp(dataset(0, 90), path, encoding={"temperature": {"chunks": (30, 4)}})
    ds = xr.open_dataset(path, engine="zarrpp")
    print(f"stored: {ds.sizes['time']} days, {str(ds.time.values[0])[:10]} .. {str(ds.time.values[-1])[:10]}")

    # 2. Back-fill in front on the cluster while a worker appends at the end.
    space = tempfile.mkdtemp(prefix="zarrpp-dask-")  # the workers' scratch space
    try:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40,
                          local_directory=space) as cluster, Client(cluster) as client:
            appended = client.submit(append_days, path, 90, 14)  # 14 more days, on a worker
            zx.to_zarrpp(dataset(-args.days, args.days, lazy=True), path, prepend_dim="time")
            appended.result()
    finally:
        shutil.rmtree(space, ignore_errors=True)

    # 3. Read it back.
    ds = xr.open_dataset(path, engine="zarrpp")
    z = zarrpp.open_array(path, path="temperature")
    print(f"now:    {ds.sizes['time']} days, {str(ds.time.values[0])[:10]} .. {str(ds.time.values[-1])[:10]}; "
          f"the array's domain along time is {z.domain[0]} (coordinate 0 is still {START.date()})")
    expected = temperature(np.arange(-args.days, 90 + 14))
    ok = np.array_equal(ds.temperature.values, expected)
    print(ds)
    monthly = ds.temperature.astype("f8").resample(time="MS").mean().to_pandas().round(1)
    print("\nmonthly means (°C):")
    print(monthly.to_string())
    print(f"\nevery value as computed: {ok}")
    if args.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("(no matplotlib here: not plotting)")
        else:
            ds.temperature.plot.line(x="time", hue="station")
            plt.savefig(args.plot, dpi=100)
            print(f"plot saved to {args.plot}")
    if not args.dir:
        shutil.rmtree(top)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
