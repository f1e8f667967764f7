"""Zip files written by several processes at once: the interleaving that lost rows, forced with the
core's pause points (ZARRPP_TEST_PAUSE), and a matrix of growth, set and attribute updates from
processes killed (SIGKILL) at random and while they commit. Readers run all the while."""
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import MutableMapping

import numpy as np
import pytest

import zarrpp
from zarrpp.storage import ZipStore

sys.path.insert(0, os.path.dirname(__file__))
from conftest import cli_path  # noqa: E402

ROW = 4  # elements per row of the arrays grown here


def _make(path, rows=2):
    with ZipStore(path, mode="w") as zs:
        z = zarrpp.create_array(store=zs, shape=(rows, ROW), chunks=(2, ROW), dtype="i8", fill_value=-1)
        z[:] = 0


def _npy(tmp_path, name, value, rows=1):
    p = str(tmp_path / name)
    np.save(p, np.full((rows, ROW), value, dtype="i8"))
    return p


def _wait_for(predicate, seconds=30.0):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def _litter(path):
    d, name = os.path.split(path)
    return sorted(n for n in os.listdir(d) if n.startswith("." + name + "."))


def _group_gone(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def _second_waits_then_both_succeed(pause, first, second, what):
    """`first` is paused at a point holding the lock: `second` must be waiting for it; then
    `first` is let go and both must succeed."""
    time.sleep(0.5)
    assert second.poll() is None, what + ": " + second.stderr.read()
    for f in os.listdir(pause):
        os.remove(pause / f)
    assert first.wait(60) == 0, first.stderr.read()
    assert second.wait(60) == 0, second.stderr.read()


def test_two_appends_forced_to_overlap_lose_no_row(tmp_path):
    """A stands between reading zarr.json and writing (its growth holds the archive's lock there);
    B, started then, waits for A's commit and grows the array A left. Before the lock was taken
    first, B committed meanwhile and A took B's zarr.json for its own write: one row lost."""
    path = str(tmp_path / "c.zip")
    _make(path, rows=3)
    pause = tmp_path / "pause"
    pause.mkdir()
    env_a = {**os.environ, "ZARRPP_TEST_PAUSE": f"growth.read:{pause}"}
    a = subprocess.Popen([cli_path(), "append", path, "--axis", "0", "--from", _npy(tmp_path, "a.npy", 7, 2)],
                         env=env_a, stderr=subprocess.PIPE, text=True)
    assert _wait_for(lambda: os.listdir(pause)), "A never reached its pause point"
    b = subprocess.Popen([cli_path(), "append", path, "--axis", "0", "--from", _npy(tmp_path, "b.npy", 9)],
                         stderr=subprocess.PIPE, text=True)
    _second_waits_then_both_succeed(pause, a, b, "B did not wait for A's lock")
    z = zarrpp.open_array(store=ZipStore(path), mode="r")
    assert z.shape == (6, ROW)
    assert [int(r[0]) for r in z[:]] == [0, 0, 0, 7, 7, 9]
    assert _litter(path) == []


def test_readers_take_no_lock_and_create_nothing(tmp_path):
    path = str(tmp_path / "r.zip")
    _make(path)
    writer = ZipStore(path, mode="a", lock_timeout=0)
    zarrpp.open_array(store=writer).append(np.full((1, ROW), 5))  # holds the lock until closed
    for args in (["get", path], ["info", path], ["ls", path], ["tree", path],
                 ["show", path, "--svg", str(tmp_path / "m.svg")]):
        r = subprocess.run([cli_path(), *args], capture_output=True, text=True, timeout=20)
        assert r.returncode == 0, (args, r.stderr)
    grow = subprocess.Popen([cli_path(), "append", path, "--axis", "0", "--from", _npy(tmp_path, "x.npy", 1)],
                            stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    assert grow.poll() is None  # a writer waits for the lock
    writer.close()
    assert grow.wait(60) == 0, grow.stderr.read()  # then grows what the first one committed
    assert [int(v[0]) for v in zarrpp.open_array(store=ZipStore(path), mode="r")[:]] == [0, 0, 5, 1]
    missing = str(tmp_path / "missing.zip")
    r = subprocess.run([cli_path(), "get", missing], capture_output=True, text=True)
    assert r.returncode != 0 and not os.path.exists(missing)
    os.chmod(path, 0o444)
    try:
        r = subprocess.run([cli_path(), "get", path, "0"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr  # a read-only archive reads
    finally:
        os.chmod(path, 0o644)


def test_a_commit_killed_leaves_a_copy_the_next_writer_removes(tmp_path):
    path = str(tmp_path / "k.zip")
    _make(path)
    before = open(path, "rb").read()
    pause = tmp_path / "pause"
    pause.mkdir()
    p = subprocess.Popen([cli_path(), "append", path, "--axis", "0", "--from", _npy(tmp_path, "a.npy", 3)],
                         env={**os.environ, "ZARRPP_TEST_PAUSE": f"zip.commit:{pause}"})
    assert _wait_for(lambda: os.listdir(pause))
    left = _litter(path)
    assert any(".zarrpp-new-" in n for n in left) and any(".zarrpp-staged-" in n for n in left), left
    p.send_signal(signal.SIGKILL)
    p.wait()
    for f in os.listdir(pause):
        os.remove(pause / f)
    assert open(path, "rb").read() == before  # the archive as it was
    assert _litter(path) == left  # a reader removes nothing
    zarrpp.open_array(store=ZipStore(path), mode="r")[:]
    assert _litter(path) == left
    r = subprocess.run([cli_path(), "append", path, "--axis", "0", "--from", _npy(tmp_path, "b.npy", 4)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert _litter(path) == []  # the next writer removed the dead commit's copy and staged values
    assert [int(v[0]) for v in zarrpp.open_array(store=ZipStore(path), mode="r")[:]] == [0, 0, 4]


_WORKER = r"""
import json, os, random, subprocess, sys
import numpy as np
import zarrpp
from zarrpp.storage import ZipStore
path, slot, gen, n, log, cli, tmp = sys.argv[1:8]
slot, gen, n = int(slot), int(gen), int(n)
rng = random.Random(slot * 1000 + gen)
out = open(log, "a")
def note(**kw):
    out.write(json.dumps(kw) + "\n"); out.flush(); os.fsync(out.fileno())
for i in range(n):
    value = slot * 100000 + gen * 1000 + i
    op = rng.choice(["append_cli", "append_api", "set_cli", "attr_api"])
    note(op=op, value=value, state="try")
    if op == "append_cli":
        npy = os.path.join(tmp, f"row-{slot}-{gen}-{i}.npy")
        np.save(npy, np.full((1, 4), 10_000_000 + value, dtype="i8"))
        r = subprocess.run([cli, "append", path, "--axis", "0", "--from", npy], capture_output=True, text=True)
        note(op=op, value=value, state="ok" if r.returncode == 0 else "failed", rc=r.returncode, err=r.stderr)
    elif op == "set_cli":
        r = subprocess.run([cli, "set", path, f"0, {slot}", "--value", str(value)], capture_output=True, text=True)
        note(op=op, value=value, state="ok" if r.returncode == 0 else "failed", rc=r.returncode, err=r.stderr)
    else:
        with ZipStore(path, mode="a", lock_timeout=120) as zs:
            z = zarrpp.open_array(store=zs)
            if op == "append_api":
                z.append(np.full((1, 4), 10_000_000 + value, dtype="i8"))
            else:
                z.attrs[f"s{slot}"] = value
        note(op=op, value=value, state="ok")
"""


def _read_log(log):
    entries = []
    if os.path.exists(log):
        for line in open(log):
            try:
                entries.append(json.loads(line))
            except ValueError:
                pass  # a line cut by SIGKILL
    return entries


def _check_read(path):
    """A reader during the run: the array as some commit left it (every grown row whole)."""
    values = zarrpp.open_array(store=ZipStore(path), mode="r")[:]
    for row in values[2:]:
        assert len(set(row.tolist())) == 1 and row[0] >= 10_000_000, row


def test_processes_growing_setting_and_annotating_one_zip_file_killed_at_random(tmp_path):
    seed = int(os.environ.get("ZARRPP_ZIP_MATRIX_SEED", "20261206"))
    seconds = float(os.environ.get("ZARRPP_ZIP_MATRIX_SECONDS", "15"))
    rng = random.Random(seed)
    path = str(tmp_path / "m.zip")
    _make(path)
    pause = tmp_path / "pause"
    pause.mkdir()
    slots, gens, logs = 3, {}, {}
    procs = {}

    def start(slot):
        gens[slot] = gens.get(slot, -1) + 1
        logs.setdefault(slot, str(tmp_path / f"log-{slot}.jsonl"))
        env = dict(os.environ)
        if gens[slot] % 2 == 1:  # every other generation stops at each commit, for the harness
            env["ZARRPP_TEST_PAUSE"] = f"zip.commit:{pause}"
        procs[slot] = subprocess.Popen(
            [sys.executable, "-c", _WORKER, path, str(slot), str(gens[slot]), "40", logs[slot], cli_path(),
             str(tmp_path)], env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    for s in range(slots):
        start(s)
    kills = commit_kills = reads = 0
    until = time.monotonic() + seconds
    try:
        while time.monotonic() < until:
            time.sleep(rng.uniform(0.05, 0.3))
            for flag in os.listdir(pause):  # a process standing in its commit: kill it, or let it go on
                pid = int(flag.rsplit(".", 1)[1])
                if rng.random() < 0.4:
                    try:
                        os.kill(pid, signal.SIGKILL)
                        commit_kills += 1
                    except ProcessLookupError:
                        pass
                os.remove(pause / flag)
            if rng.random() < 0.25:
                victim = rng.randrange(slots)
                if procs[victim].poll() is None:
                    os.killpg(procs[victim].pid, signal.SIGKILL)
                    kills += 1
            for s in range(slots):
                if procs[s].poll() is not None:
                    if procs[s].returncode not in (0, -signal.SIGKILL):
                        raise AssertionError(f"slot {s} failed (seed {seed}): " + procs[s].stderr.read().decode())
                    start(s)
            _check_read(path)
            reads += 1
    finally:
        for p in procs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        for flag in os.listdir(pause):
            os.remove(pause / flag)
    # Every killed group gone (a killed writer's own children are reaped by init, later under
    # load): a writer sweeps only what writers that are gone left.
    for p in procs.values():
        assert _wait_for(lambda: _group_gone(p.pid)), "a killed writer's process group lingers"
    # One clean writer: it sweeps what the killed ones left.
    with ZipStore(path, mode="a") as zs:
        zarrpp.open_array(store=zs).attrs["final"] = True
    assert _litter(path) == [], f"seed {seed}"
    z = zarrpp.open_array(store=ZipStore(path), mode="r")
    values, attrs = z[:], z.attrs.asdict()
    entries = [e for s in range(slots) for e in _read_log(logs[s])]
    tried = {e["value"] for e in entries if e["state"] == "try"}
    done = {e["value"] for e in entries if e["state"] == "ok"}
    failed = {e["value"] for e in entries if e["state"] == "failed" and e.get("rc", 0) > 0}
    grown = [int(r[0]) - 10_000_000 for r in values[2:]]
    for row in values[2:]:
        assert len(set(row.tolist())) == 1, f"a torn row {row} (seed {seed})"
    assert len(grown) == len(set(grown)), f"a row applied twice (seed {seed})"
    assert set(grown) <= tried, f"a row no writer wrote (seed {seed})"
    appended = {e["value"] for e in entries if e["op"].startswith("append") and e["state"] == "ok"}
    assert appended <= set(grown), f"rows lost: {sorted(appended - set(grown))} (seed {seed})"
    assert not (failed & set(grown)), f"a failed append landed (seed {seed})"
    for s in range(slots):
        mine = [e for e in entries if e["state"] == "ok" and e["value"] // 100000 == s]
        sets = [e["value"] for e in mine if e["op"] == "set_cli"]
        cell = int(values[0, s])
        assert cell == 0 or cell in tried, f"column {s} holds {cell} (seed {seed})"
        assert not sets or cell >= max(sets), f"column {s}: {cell} < {max(sets)} (seed {seed})"
        marks = [e["value"] for e in mine if e["op"] == "attr_api"]
        if marks:
            assert attrs.get(f"s{s}", -1) >= max(marks), f"attribute s{s} lost (seed {seed})"
    assert kills + commit_kills > 0 and reads > 0 and len(done) > 10, (kills, commit_kills, reads, len(done))
    print(f"seed {seed}: {len(done)} operations done, {kills} random kills, {commit_kills} kills in a commit, "
          f"{reads} reads, {len(grown)} rows grown")


@pytest.mark.parametrize("proxy", ["directory_store", "dict_proxy"])
def test_from_array_over_its_own_source_through_another_store_is_refused(tmp_path, proxy):
    zarr2 = pytest.importorskip("zarr")
    if proxy == "directory_store":
        src = zarrpp.create_array(str(tmp_path / "d.zarr"), name="a", shape=(4,), chunks=(2,), dtype="i4",
                                  zarr_format=2)
        src[:] = [1, 2, 3, 4]
        dest = zarr2.storage.DirectoryStore(str(tmp_path / "d.zarr"))
    else:
        backing = {}
        src = zarrpp.create_array(backing, name="a", shape=(4,), chunks=(2,), dtype="i4")
        src[:] = [1, 2, 3, 4]

        class Proxy(MutableMapping):  # another mapping object over the same dict
            def __getitem__(self, k):
                return backing[k]

            def __setitem__(self, k, v):
                backing[k] = v

            def __delitem__(self, k):
                del backing[k]

            def __iter__(self):
                return iter(backing)

            def __len__(self):
                return len(backing)
        dest = Proxy()
    for name in ("a", ""):  # the source itself, and the group holding it
        with pytest.raises(ValueError, match="same node or one lies inside the other"):
            zarrpp.from_array(dest, data=src, name=name, overwrite=True)
        assert list(src[:]) == [1, 2, 3, 4]
    keys = os.listdir(tmp_path / "d.zarr" / "a") if proxy == "directory_store" else list(backing)
    assert not any("zarrpp-overlap-probe" in k for k in keys)
    # Elsewhere in the same store it goes ahead.
    out = zarrpp.from_array(dest, data=src, name="b", overwrite=True)
    assert list(out[:]) == [1, 2, 3, 4] and list(src[:]) == [1, 2, 3, 4]


@pytest.mark.parametrize("where", ["folder", "zip"])
def test_a_conversion_in_place_and_a_growth_at_once_lose_no_row(tmp_path, where):
    """convert in place read the array's document without its lock: a growth that landed between
    that read and the conversion's write was hidden (the shape converted was the older one)."""
    path = str(tmp_path / ("t.zip/arr" if where == "zip" else "t.zarr"))
    r = subprocess.run([cli_path(), "create", path, "--shape", "0,4", "--chunks", "2,4", "--dtype", "int64",
                        "--zarr-format", "2"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    pause = tmp_path / "pause"
    pause.mkdir()
    point = "zip.commit" if where == "zip" else "growth.read"
    grow = subprocess.Popen([cli_path(), "append", path, "--axis", "0", "--from", _npy(tmp_path, "a.npy", 1)],
                            env={**os.environ, "ZARRPP_TEST_PAUSE": f"{point}:{pause}"}, stderr=subprocess.PIPE,
                            text=True)
    assert _wait_for(lambda: os.listdir(pause))
    conv = subprocess.Popen([cli_path(), "convert", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    _second_waits_then_both_succeed(pause, grow, conv, "the conversion did not wait for the growth's lock")
    # Free-running: appends and conversions both ways, at once; every append that succeeded is there.
    done = 1
    for i in range(12):
        a = subprocess.Popen([cli_path(), "append", path, "--axis", "0", "--from", _npy(tmp_path, f"r{i}.npy", i + 2)],
                             stderr=subprocess.PIPE, text=True)
        c = subprocess.run([cli_path(), "convert", path, "--zarr-format", str(2 + i % 2)], capture_output=True,
                           text=True)
        assert c.returncode == 0, c.stderr
        rc = a.wait(60)
        err = a.stderr.read()
        if rc == 0:
            done += 1
        else:  # refused, naming why, with nothing applied
            assert "changed meanwhile" in err and "nothing of the change was applied" in err, err
    out = subprocess.run([cli_path(), "get", path, "...", "--oindex"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got = subprocess.run([cli_path(), "info", path, "--json"], capture_output=True, text=True)
    assert json.loads(got.stdout)["shape"][0] == done, (done, got.stdout)


def test_an_overwrite_finds_a_source_rooted_below_it_or_read_through_consolidated_metadata(tmp_path):
    """Red-team cases: a zarr-python 2 array opened at its own folder (its store's root lies inside
    the group overwritten), and one opened through .zmetadata (its chunks in chunk_store)."""
    zarr2 = pytest.importorskip("zarr")
    root = str(tmp_path / "e1")
    g = zarr2.open_group(root, mode="w")
    g.create_group("g").create_dataset("a", data=np.arange(10, dtype="i4"), chunks=(3,))
    src = zarr2.open_array(os.path.join(root, "g", "a"), mode="r")
    for dest, name in ((root, "g"), (zarr2.storage.DirectoryStore(root), "g"),
                       (zarr2.storage.DirectoryStore(os.path.join(root, "g")), "")):
        with pytest.raises(ValueError, match="same node or one lies inside the other"):
            zarrpp.from_array(dest, name=name, data=src, overwrite=True)
        assert list(zarr2.open_array(os.path.join(root, "g", "a"), mode="r")[:]) == list(range(10))
    with pytest.raises(ValueError, match="overlap"):
        zarrpp.copy_array(zarrpp.open_array(zarr2.storage.DirectoryStore(os.path.join(root, "g", "a"))), root,
                          path="g", overwrite=True)
    assert list(zarr2.open_array(os.path.join(root, "g", "a"), mode="r")[:]) == list(range(10))
    markers = [f for _, _, files in os.walk(root) for f in files if "overlap-probe" in f]
    assert markers == []
    cons = str(tmp_path / "d2")
    zarr2.open_group(cons, mode="w").create_dataset("a", data=np.arange(6, dtype="i4"), chunks=(2,))
    zarr2.consolidate_metadata(cons)
    src = zarr2.open_consolidated(cons, mode="r")["a"]
    with pytest.raises(ValueError, match="same node"):
        zarrpp.from_array(cons, name="a", data=src, overwrite=True)
    assert list(zarr2.open_array(os.path.join(cons, "a"), mode="r")[:]) == list(range(6))
