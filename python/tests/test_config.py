"""``zarrpp.config``: zarr-python 3's ``zarr.config`` — its defaults, ``get``/``set``/``reset``, the
``ZARR_*`` environment variables, and the keys that change what zarrpp does."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import zarr as zarr2

import zarrpp

config = zarrpp.config


@pytest.fixture(autouse=True)
def _fresh_config():
    config.reset()
    yield
    config.reset()


def test_defaults_are_zarr_pythons():
    assert config.get("array.order") == "C" and config.get("default_zarr_format") == 3
    assert config.get("async.concurrency") == 10 and config.get("async.timeout") is None
    assert config.get("json_indent") == 2 and config.get("codec_pipeline.batch_size") == 1
    assert config.get("array.write_empty_chunks") is False and config.get("array.rectilinear_chunks") is False
    assert config.get("codecs.blosc") == "zarr.codecs.blosc.BloscCodec"
    assert set(config.defaults[0]) == {"default_zarr_format", "array", "async", "threading", "json_indent",
                                       "codec_pipeline", "codecs", "buffer", "ndbuffer"}
    assert config.get("not.a.key", "fallback") == "fallback"
    with pytest.raises(KeyError):
        config.get("not.a.key")


def test_set_for_good_for_a_block_and_reset():
    with config.set({"array.order": "F", "async.concurrency": 4}) as c:
        assert c is config and config.get("array.order") == "F" and config.get("async.concurrency") == 4
    assert config.get("array.order") == "C" and config.get("async.concurrency") == 10
    config.set(array__order="F")  # donfig's keyword form
    assert config.get("array.order") == "F"
    with config.set({"array": {"order": "C"}}):  # a dict replaces the whole subtree, as donfig does
        assert config.get("array.order") == "C" and "array.write_empty_chunks" not in config
    assert config.get("array.write_empty_chunks") is False and config.get("array.order") == "F"
    config.set({"my.own-key": [1, 2]})  # unknown keys are kept, '-' and '_' alike
    assert config.get("my.own_key") == [1, 2]
    config.reset()
    assert config.get("array.order") == "C" and "my.own-key" not in config


def test_values_zarrpp_cannot_take_are_refused_and_nothing_is_set():
    refused = [({"array.v3_default_compressors": "x"}, "removed"), ({"array.v2_default_filters.string": []}, "removed"),
               ({"codecs.blosc": "my.Blosc"}, "own codecs"), ({"codecs.newcodec": "my.New"}, "own codecs"),
               ({"buffer": "zarr.buffer.gpu.Buffer"}, "CPU"), ({"codec_pipeline.path": "my.Pipeline"}, "pipeline"),
               ({"array.read_missing_chunks": False}, "fill value"), ({"array.order": "K"}, "'C' or 'F'"),
               ({"default_zarr_format": 4}, "2 or 3"), ({"async.concurrency": 0}, ">= 1"),
               ({"array.write_empty_chunks": "yes"}, "True or False"),
               ({"array.order": "F", "array.rectilinear_chunks": 1}, "True or False")]
    for values, word in refused:
        with pytest.raises(ValueError, match=word):
            config.set(values)
        assert config.get("array.order") == "C"  # nothing of a refused set is applied
    with pytest.raises(ValueError, match="GPU"):
        config.enable_gpu()
    with config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.FusedCodecPipeline",
                     "buffer": "zarr.core.buffer.cpu.Buffer", "json_indent": 0, "threading.max_workers": 2}):
        assert config.get("codec_pipeline.path").endswith("FusedCodecPipeline")


def test_default_zarr_format_applies_to_every_way_of_making_a_node(tmp_path):
    with config.set({"default_zarr_format": 2}):
        made = [zarrpp.create_array(str(tmp_path / "a"), shape=(2,), dtype="i1"),
                zarrpp.create(shape=(2,), store=str(tmp_path / "b")),
                zarrpp.open(str(tmp_path / "c"), mode="w", shape=(2,)),
                zarrpp.create_group(str(tmp_path / "g")), zarrpp.open_group(str(tmp_path / "h"), mode="w")]
        zarrpp.save(str(tmp_path / "s"), np.arange(3))
        explicit = zarrpp.create_array(str(tmp_path / "e"), shape=(2,), dtype="i1", zarr_format=3)
    assert [m.metadata["zarr_format"] for m in made] == [2] * 5
    assert (tmp_path / "s" / ".zarray").exists() and explicit.metadata["zarr_format"] == 3
    assert zarrpp.create_array(str(tmp_path / "after"), shape=(2,), dtype="i1").metadata["zarr_format"] == 3


def test_array_order_is_the_stored_order_of_new_v2_arrays(tmp_path):
    with config.set({"array.order": "F"}):
        z = zarrpp.create_array(str(tmp_path / "f"), shape=(2, 3), chunks=(2, 3), dtype="i4", zarr_format=2)
        c = zarrpp.create_array(str(tmp_path / "c"), shape=(2, 3), dtype="i4", zarr_format=2, order="C")
    z[:] = np.arange(6).reshape(2, 3)
    assert json.loads((tmp_path / "f" / ".zarray").read_text())["order"] == "F" and c.order == "C"
    back = zarr2.open(str(tmp_path / "f"), mode="r")
    assert back.order == "F" and np.array_equal(back[:], np.arange(6).reshape(2, 3))


def test_write_empty_chunks_and_concurrency_are_taken_when_an_array_is_opened(tmp_path):
    z = zarrpp.create_array(str(tmp_path / "a"), shape=(4,), chunks=(2,), dtype="i4", fill_value=0)
    z[:] = 0
    assert not (tmp_path / "a" / "c").exists()  # the default: chunks of fill values are not stored
    default_threads = z._core.concurrency
    with config.set({"array.write_empty_chunks": True, "async.concurrency": 3}):
        kept = zarrpp.open_array(str(tmp_path / "a"))
        own = zarrpp.create_array(str(tmp_path / "b"), shape=(4,), chunks=(2,), dtype="i4", fill_value=0,
                                  config={"write_empty_chunks": False})
    assert kept._core.concurrency == 3 and zarrpp.open_array(str(tmp_path / "a"))._core.concurrency == default_threads
    own[:] = 0
    assert not (tmp_path / "b" / "c").exists()  # the array's own config wins
    kept[:] = 0  # the setting stays with the array opened under it
    assert sorted(os.listdir(tmp_path / "a" / "c")) == ["0", "1"]


def test_zarr_environment_variables_are_read_at_import_and_by_reset(tmp_path, monkeypatch):
    code = ("import json, warnings, zarrpp\nwarnings.simplefilter('error', RuntimeWarning)\n"
            "c = zarrpp.config\n"
            "z = zarrpp.create_array(None, shape=(2, 2), dtype='i1')\n"
            "print(json.dumps([c.get('array.order'), c.get('async.concurrency'), c.get('my.flag'),"
            " z.metadata['zarr_format'], z.order]))\n")
    env = dict(os.environ, ZARR_ARRAY__ORDER="F", ZARR_ASYNC__CONCURRENCY="3", ZARR_DEFAULT_ZARR_FORMAT="2",
               ZARR_MY__FLAG="some text")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == ["F", 3, "some text", 2, "F"]
    bad = dict(os.environ, ZARR_CODECS__BLOSC="my.Blosc", ZARR_ARRAY__ORDER="F")
    r = subprocess.run([sys.executable, "-c", "import zarrpp; print(zarrpp.config.get('codecs.blosc'), "
                        "zarrpp.config.get('array.order'))"], env=bad, capture_output=True, text=True, check=True)
    assert r.stdout.split() == ["zarr.codecs.blosc.BloscCodec", "F"]
    assert "ZARR_CODECS__BLOSC is not applied" in r.stderr
    monkeypatch.setenv("ZARR_JSON_INDENT", "4")
    config.reset()
    assert config.get("json_indent") == 4
    monkeypatch.delenv("ZARR_JSON_INDENT")
    config.reset()
    assert config.get("json_indent") == 2
