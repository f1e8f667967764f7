"""The clouds besides S3: Azure Blob Storage through Azurite (az:// URLs with adlfs's
storage_options, from zarrpp, xarray and pickled for Dask), and gs:// URLs."""
import pickle

import numpy as np
import pytest

import zarrpp
import zarrpp.storage


def test_arrays_grow_in_front_on_azure(azurite):
    so = {"connection_string": azurite}
    z = zarrpp.create_array("az://zarr/py/a", shape=(4, 3), chunks=(2, 3), dtype="i4", storage_options=so)
    z[:] = np.arange(12).reshape(4, 3)
    z.prepend(np.full((2, 3), -1, dtype="i4"))
    z.append(np.full((2, 3), 9, dtype="i4"))
    back = zarrpp.open_array("az://zarr/py/a", mode="r", storage_options=so)
    assert back.domain == ((-2, 6), (0, 3))
    assert back[...].tolist() == [[-1] * 3] * 2 + np.arange(12).reshape(4, 3).tolist() + [[9] * 3] * 2
    st = back.store
    assert isinstance(st, zarrpp.storage.AzureStore)
    assert (st.container, st.prefix, st.account) == ("zarr", "py/a", "devstoreaccount1")
    assert z.store.supports_conditional_writes
    assert not st.supports_conditional_writes  # read-only: nothing that writes is asked, not even a probe
    keys = sorted(k for k in zarrpp.storage.open_url("az://zarr/py/a", so).list() if k.startswith("c/"))
    assert keys == ["c/-1/0", "c/0/0", "c/1/0", "c/2/0"]
    again = pickle.loads(pickle.dumps(st))  # by URL and the options given: what Dask workers get
    assert zarrpp.open_array(again, mode="r")[0, 0] == -1


def test_account_name_and_key_as_adlfs_spells_them(azurite, monkeypatch):
    endpoint = azurite.split("BlobEndpoint=")[1].rstrip(";")
    from conftest import AZURITE_KEY
    so = {"account_name": "devstoreaccount1", "account_key": AZURITE_KEY, "endpoint_url": endpoint}
    z = zarrpp.create_array("abfs://zarr/py/b", shape=(3,), chunks=(2,), dtype="f8", storage_options=so)
    z[:] = [1.5, 2.5, 3.5]
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite)
    assert zarrpp.open_array("az://zarr/py/b", mode="r")[...].tolist() == [1.5, 2.5, 3.5]


def test_bad_azure_settings_are_refused_by_name(azurite, monkeypatch):
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING", raising=False)
    monkeypatch.delenv("AZURE_STORAGE_ACCOUNT_NAME", raising=False)
    with pytest.raises(ValueError, match="no account given"):
        zarrpp.open_array("az://zarr/py/a")
    with pytest.raises(ValueError, match="account key is not base64"):
        zarrpp.open_array("az://zarr/py/a", storage_options={"account_name": "devstoreaccount1", "account_key": "x!"})
    with pytest.raises(ValueError, match="unknown option 'acount_name'.*account_name"):
        zarrpp.open_array("az://zarr/py/a", storage_options={"acount_name": "devstoreaccount1"})
    wrong = azurite.replace("AccountKey=", "AccountKey=AAAA")
    with pytest.raises(Exception, match="check the account name and key"):
        zarrpp.open_array("az://zarr/py/a", storage_options={"connection_string": wrong})


def test_xarray_writes_grows_and_reads_a_dataset_on_azure(azurite):
    xr = pytest.importorskip("xarray")
    import zarrpp.xarray as zx
    so = {"connection_string": azurite}
    ds = xr.Dataset({"t2m": (("time", "x"), np.arange(12.0).reshape(4, 3))}, coords={"time": np.arange(4)})
    zx.to_zarrpp(ds, "az://zarr/py/ds.zarr", storage_options=so)
    earlier = xr.Dataset({"t2m": (("time", "x"), np.full((2, 3), -1.0))}, coords={"time": [-2, -1]})
    zx.to_zarrpp(earlier, "az://zarr/py/ds.zarr", prepend_dim="time", storage_options=so)
    back = xr.open_dataset("az://zarr/py/ds.zarr", engine=zx.ZarrppBackendEntrypoint, storage_options=so).load()
    xr.testing.assert_identical(back, xr.concat([earlier, ds], dim="time"))


def test_gcs_urls_open_the_store_that_speaks_gcs(moto_s3, monkeypatch):
    # Public data: GCS's HTTPS layout, read-only; HMAC keys: GCS's S3-compatible API (moto stands in),
    # where growth is refused (GCS conditions writes by generation, which zarrpp does not send yet).
    monkeypatch.delenv("GS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("STORAGE_EMULATOR_HOST", raising=False)
    public = zarrpp.storage.open_url("gs://pub-bucket/era5.zarr")
    assert isinstance(public, zarrpp.storage.HttpStore) and public.read_only
    so = {"endpoint_url": moto_s3, "key": "test", "secret": "test"}
    z = zarrpp.create_array("gs://bucket/g", shape=(4,), chunks=(2,), dtype="i4", storage_options=so)
    assert isinstance(z.store, zarrpp.storage.S3Store)
    z[:] = [1, 2, 3, 4]
    with pytest.raises(Exception, match="generation conditions"):
        z.prepend(np.array([0, 0], dtype="i4"))
    assert zarrpp.open_array("gs://bucket/g", mode="r", storage_options=so)[...].tolist() == [1, 2, 3, 4]
    assert not z.store.supports_conditional_writes
