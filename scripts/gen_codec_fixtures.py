#!/usr/bin/python3
"""Independent byte-stream fixtures for zarrpp's codecs.

Run from the repository root with Debian's interpreter (it has numpy and numcodecs):

    /usr/bin/python3 scripts/gen_codec_fixtures.py

Writes tests/data/codecs/<case>.raw (decoded bytes: C-order, little-endian element bytes),
tests/data/codecs/<case>.enc (encoded bytes) and tests/data/codecs/manifest.json, which lists
every case as {"name", "codec", "dtype", "shape", "deterministic", "producer"}:

  codec          the Zarr v3 codec metadata (one codec). For a bytes -> bytes codec X the pipeline
                 under test is [{"name": "bytes", "configuration": {"endian": "little"}}, X]; for
                 a "bytes" codec the pipeline is just that codec; for an array -> array filter (the
                 case says "before_bytes": true) it is [X, {"name": "bytes", ...little}].
  deterministic  true when an encoder must reproduce .enc exactly (crc32c, bytes).
  lossy          true when decoding does not give .raw back: <case>.dec holds what it gives.
  producer       what made .enc (informational only).

Producers are independent of zarrpp: numcodecs (zlib via Python's gzip module, libzstd,
c-blosc 1.x), the zstd command-line tool (for frames with a content checksum or without a
content size, which numcodecs 0.11 cannot make), a hand-written CRC32C (or the crc32c module
when it is installed) and numpy byte swapping. Every stream is decoded again with an independent
decoder before it is written. Output is deterministic: fixed seeds, gzip MTIME zeroed.
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import numcodecs
from numcodecs import GZip, Zstd, Blosc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "codecs")

BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}

# ---- CRC32C -------------------------------------------------------------------------------------
try:
    import crc32c as _crc32c_mod  # python3-crc32c

    def crc32c(data: bytes) -> int:
        return _crc32c_mod.crc32c(data) & 0xFFFFFFFF

    CRC32C_PRODUCER = "crc32c module"
except ImportError:  # Castagnoli, reflected polynomial 0x82F63B78, init and final xor 0xFFFFFFFF
    _TABLE = []
    for _n in range(256):
        _c = _n
        for _ in range(8):
            _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
        _TABLE.append(_c)

    def crc32c(data: bytes) -> int:
        c = 0xFFFFFFFF
        for b in data:
            c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
        return c ^ 0xFFFFFFFF

    CRC32C_PRODUCER = "hand-written CRC32C (gen_codec_fixtures.py)"

assert crc32c(b"123456789") == 0xE3069283, hex(crc32c(b"123456789"))
assert crc32c(b"") == 0
assert crc32c(bytes(32)) == 0x8A9136AA  # RFC 3720 B.4: 32 bytes of zeros


# ---- data ---------------------------------------------------------------------------------------
def le(a: np.ndarray) -> np.ndarray:
    """C-order, little-endian copy of `a`."""
    return np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"), copy=False))


def smooth_u16(shape=(32, 32)):
    i, j = np.indices(shape)
    v = 20000 + np.round(60 * np.sin(i / 6.0) * np.cos(j / 9.0)) + 4 * (i // 8)
    return le(v.astype(np.uint16))


def noisy_u16(seed, shape=(32, 32)):
    return le(np.random.default_rng(seed).integers(0, 1 << 16, size=shape, dtype=np.uint16))


def blosc_data(dtype, seed, shape):
    """Compressible data whose compressed size depends on the shuffle: a piecewise-constant ramp
    with sparse random spikes."""
    rng = np.random.default_rng(seed)
    i, j = np.indices(shape)
    dt = np.dtype(dtype)
    base = 3 * (i // 2) + (j // 4)
    spikes = (rng.random(shape) < 0.05) * rng.integers(1, 50, size=shape)
    if dt.kind == "f":
        v = 0.25 * base + 1.5 + spikes
    else:
        v = base + spikes - (100 if dt.kind == "i" else 0)
    return le(v.astype(dt))


# ---- writing ------------------------------------------------------------------------------------
CASES = []


def add(name, codec, arr, enc, deterministic, producer, before_bytes=False, decoded=None):
    assert all(c.isalnum() or c == "_" for c in name), name
    assert name not in {c["name"] for c in CASES}, name
    raw = le(arr).tobytes()
    with open(os.path.join(OUT, name + ".raw"), "wb") as f:
        f.write(raw)
    with open(os.path.join(OUT, name + ".enc"), "wb") as f:
        f.write(bytes(enc))
    if decoded is not None:  # a lossy codec: what decoding gives back
        with open(os.path.join(OUT, name + ".dec"), "wb") as f:
            f.write(le(decoded).tobytes())
    CASES.append({
        "name": name,
        "codec": codec,
        # numpy names match the Zarr v3 core names used here; text is NumPy's U<n> spelling
        "dtype": f"U{arr.dtype.itemsize // 4}" if arr.dtype.kind == "U" else np.dtype(arr.dtype).name,
        "shape": [int(s) for s in arr.shape],
        "deterministic": deterministic,
        "producer": producer,
        **({"before_bytes": True} if before_bytes else {}),
        **({"lossy": True} if decoded is not None else {}),
    })


# ---- gzip ---------------------------------------------------------------------------------------
def gzip_cases():
    datasets = [("smooth", smooth_u16()), ("noisy", noisy_u16(1))]
    for dname, arr in datasets:
        for level in (1, 9):
            enc = bytearray(GZip(level=level).encode(arr))
            # RFC 1952 member header: ID1 ID2 CM FLG MTIME(4) XFL OS. Python writes the current time
            # in MTIME; zero it so the script is reproducible (no FHCRC, so nothing else changes).
            assert enc[:3] == b"\x1f\x8b\x08" and enc[3] == 0, enc[:10]
            enc[4:8] = b"\0\0\0\0"
            assert zlib.decompress(bytes(enc), wbits=31) == arr.tobytes()
            assert bytes(GZip().decode(bytes(enc))) == arr.tobytes()
            add(f"gzip_l{level}_{dname}_uint16", {"name": "gzip", "configuration": {"level": level}},
                arr, enc, False,
                f"numcodecs {numcodecs.__version__} GZip (Python gzip/zlib {zlib.ZLIB_RUNTIME_VERSION})")


# ---- zstd ---------------------------------------------------------------------------------------
def zstd_frame_flags(enc):
    """(content size present, checksum present) from a zstd frame header."""
    assert enc[:4] == b"\x28\xb5\x2f\xfd", enc[:4]
    fhd = enc[4]
    fcs_flag, single_segment, checksum = fhd >> 6, (fhd >> 5) & 1, (fhd >> 2) & 1
    return (fcs_flag != 0 or single_segment == 1), checksum == 1


def zstd_cli(data, args, via_stdin):
    exe = shutil.which("zstd")
    if exe is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "in.bin")
        with open(src, "wb") as f:
            f.write(data)
        if via_stdin:  # the CLI cannot know the size: the frame has no content size field
            with open(src, "rb") as f:
                r = subprocess.run([exe, "-q", "-c", "-T1", *args], stdin=f, capture_output=True, check=True)
        else:
            r = subprocess.run([exe, "-q", "-c", "-T1", *args, src], capture_output=True, check=True)
        out = r.stdout
        back = subprocess.run([exe, "-q", "-d", "-c"], input=out, capture_output=True, check=True).stdout
        assert back == data
        return out


def zstd_cases():
    datasets = [("smooth", smooth_u16()), ("noisy", noisy_u16(2))]
    numcodecs_checksum = "checksum" in Zstd.__init__.__code__.co_varnames
    for dname, arr in datasets:
        for level in (1, 3, 19):
            for checksum in (False, True):
                codec = {"name": "zstd", "configuration": {"level": level, "checksum": checksum}}
                name = f"zstd_l{level}_{'checksum_' if checksum else ''}{dname}_uint16"
                if numcodecs_checksum:
                    enc = Zstd(level=level, checksum=checksum).encode(arr)
                    producer = f"numcodecs {numcodecs.__version__} Zstd"
                elif not checksum:
                    enc = Zstd(level=level).encode(arr)
                    producer = f"numcodecs {numcodecs.__version__} Zstd"
                else:
                    # numcodecs 0.11's Zstd has no checksum argument; the zstd tool writes the
                    # same format (one frame, content size from the file's size) with --check.
                    if dname != "smooth":
                        continue
                    enc = zstd_cli(arr.tobytes(), [f"-{level}", "--check"], False)
                    if enc is None:
                        print(f"skipping {name}: no checksum support in numcodecs and no zstd tool", file=sys.stderr)
                        continue
                    producer = "zstd command-line tool --check"
                has_size, has_sum = zstd_frame_flags(enc)
                assert has_size and has_sum == checksum, (name, has_size, has_sum)
                assert bytes(Zstd().decode(enc)) == arr.tobytes()
                add(name, codec, arr, enc, False, producer)
    # A frame without a content size field (streamed writers make these), with a checksum.
    arr = smooth_u16()
    enc = zstd_cli(arr.tobytes(), ["-3", "--check"], True)
    if enc is not None:
        has_size, has_sum = zstd_frame_flags(enc)
        assert not has_size and has_sum
        add("zstd_l3_checksum_nosize_smooth_uint16",
            {"name": "zstd", "configuration": {"level": 3, "checksum": True}},
            arr, enc, False, "zstd command-line tool --check, from stdin (no content size)")


# ---- blosc --------------------------------------------------------------------------------------
SHUFFLES = [("shuffle", Blosc.SHUFFLE), ("bitshuffle", Blosc.BITSHUFFLE), ("noshuffle", Blosc.NOSHUFFLE)]
# c-blosc 1.x places compressed blocks in the order its threads finish them: compress in the
# calling thread so the frames are reproducible.
numcodecs.blosc.use_threads = False
numcodecs.blosc.set_nthreads(1)
BLOSC_PRODUCER = f"numcodecs {numcodecs.__version__} Blosc (c-blosc {numcodecs.blosc.VERSION_STRING})"


def blosc_header(enc):
    flags, typesize = enc[2], enc[3]  # enc[0], enc[1]: the blosc and codec format versions
    nbytes, blocksize, cbytes = struct.unpack_from("<III", enc, 4)
    return flags, typesize, nbytes, blocksize, cbytes


def blosc_one(name, arr, cname, shuffle_name, shuffle, blocksize=0, clevel=5):
    enc = Blosc(cname=cname, clevel=clevel, shuffle=shuffle, blocksize=blocksize).encode(arr)
    flags, typesize, nbytes, _, cbytes = blosc_header(enc)
    assert typesize == arr.dtype.itemsize and nbytes == arr.nbytes and cbytes == len(enc), name
    assert bytes(Blosc().decode(enc)) == arr.tobytes(), name
    codec = {"name": "blosc", "configuration": {"cname": cname, "clevel": clevel, "shuffle": shuffle_name,
                                                "typesize": int(arr.dtype.itemsize), "blocksize": blocksize}}
    add(name, codec, arr, enc, False, BLOSC_PRODUCER)
    return flags


def blosc_cases():
    available = set(numcodecs.blosc.list_compressors())
    dtypes = ["uint8", "int16", "float32", "float64"]
    for k, dtype in enumerate(dtypes):
        arr = blosc_data(dtype, 100 + k, (16, 32))
        for cname in ("lz4", "lz4hc", "blosclz", "zstd", "zlib"):
            if cname not in available:
                print(f"skipping blosc {cname}: not in this c-blosc", file=sys.stderr)
                continue
            for sname, shuffle in SHUFFLES:
                blosc_one(f"blosc_{cname}_{sname}_{dtype}", arr, cname, sname, shuffle)
    # Several blocks in one frame (an explicit small blocksize).
    arr = blosc_data("float32", 200, (16, 32))
    for cname in ("lz4", "zstd", "blosclz"):
        blosc_one(f"blosc_{cname}_shuffle_float32_blocks256", arr, cname, "shuffle", Blosc.SHUFFLE, blocksize=256)
    # Incompressible data: c-blosc stores it verbatim (the MEMCPYED flag).
    arr = le(np.random.default_rng(300).integers(0, 256, size=(24, 32), dtype=np.uint8))
    flags = blosc_one("blosc_lz4_noshuffle_uint8_random", arr, "lz4", "noshuffle", Blosc.NOSHUFFLE)
    assert flags & 0x2, "expected a memcpyed frame"


# ---- numcodecs' own compressors and shuffle (Zarr v2, and zarr-python 3's "numcodecs.*") ----------
def numcodecs_cases():
    from numcodecs import BZ2, LZ4, LZMA, Shuffle, Zlib
    arrays = [("u16", smooth_u16()), ("f64", blosc_data("float64", 400, (16, 32)))]
    producer = f"numcodecs {numcodecs.__version__}"
    for dname, arr in arrays:
        for name, obj, cfg in [
            ("zlib1", Zlib(1), {"level": 1}), ("zlib9", Zlib(9), {"level": 9}),
            ("lz4", LZ4(), {"acceleration": 1}), ("lz4acc8", LZ4(8), {"acceleration": 8}),
            ("bz2", BZ2(1), {"level": 1}), ("bz2l9", BZ2(9), {"level": 9}),
            ("lzma", LZMA(), {"format": 1, "check": -1, "preset": None, "filters": None}),
        ]:
            enc = obj.encode(arr)
            assert bytes(obj.decode(enc)) == arr.tobytes()
            add(f"numcodecs_{name}_{dname}", {"name": "numcodecs." + obj.codec_id, "configuration": cfg}, arr, enc,
                False, producer + f" {type(obj).__name__}")
        sh = Shuffle(arr.dtype.itemsize)
        add(f"numcodecs_shuffle_{dname}",
            {"name": "numcodecs.shuffle", "configuration": {"elementsize": arr.dtype.itemsize}},
            arr, bytes(sh.encode(arr)), True, producer + " Shuffle")


# ---- numcodecs bit filters (array -> array): bitround, packbits ----------------------------------
def bit_filter_cases():
    from numcodecs import BitRound, PackBits
    producer = f"numcodecs {numcodecs.__version__}"
    rng = np.random.default_rng(600)
    for dname, dt, keeps in (("f16", "<f2", (0, 3)), ("f32", "<f4", (7, 23)), ("f64", "<f8", (1, 20))):
        arr = rng.normal(0.0, 100.0, size=(4, 5)).astype(dt)
        arr.flat[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, np.finfo(dt).max]
        for keep in keeps:
            enc = np.asarray(BitRound(keep).encode(arr.copy())).tobytes()  # it rounds in place
            dec = np.frombuffer(bytes(BitRound(keep).decode(np.frombuffer(enc, dtype=dt.replace("f", "i")))),
                                dtype=dt).reshape(arr.shape)
            codec = {"name": "numcodecs.bitround", "configuration": {"keepbits": keep}}
            add(f"numcodecs_bitround{keep}_{dname}", codec, arr, enc, True, producer + " BitRound", before_bytes=True,
                decoded=dec)
    for n in (1, 8, 13, 64):
        arr = rng.integers(0, 2, size=n).astype(bool)
        enc = bytes(PackBits().encode(arr))
        assert np.array_equal(PackBits().decode(enc), arr)
        add(f"numcodecs_packbits_{n}", {"name": "numcodecs.packbits", "configuration": {}}, arr, enc, True,
            producer + " PackBits", before_bytes=True)


# ---- numcodecs categorize (array -> array): U<n> text to label numbers ---------------------------
def categorize_cases():
    from numcodecs import Categorize
    producer = f"numcodecs {numcodecs.__version__} Categorize"
    labels = ["paris", "lyon", "nicé", "😀z"]
    arr = np.array([["paris", "", "nicé"], ["😀z", "lyon", "paris"]], dtype="<U5")
    for astype in ("|u1", "<u2", "<i4"):
        codec = Categorize(labels, dtype="<U5", astype=astype)
        enc = bytes(np.asarray(codec.encode(arr)).astype(np.dtype(astype).newbyteorder("<")).tobytes())
        assert np.array_equal(codec.decode(enc).reshape(arr.shape), arr)
        cfg = {"labels": labels, "dtype": "<U5", "astype": astype}
        add(f"numcodecs_categorize_{astype[1:]}", {"name": "numcodecs.categorize", "configuration": cfg}, arr, enc,
            True, producer, before_bytes=True)


# ---- crc32c -------------------------------------------------------------------------------------
def crc32c_cases():
    payloads = [
        ("crc32c_empty", b""),
        ("crc32c_1byte", b"\xa5"),
        ("crc32c_check", b"123456789"),
        ("crc32c_1000", np.random.default_rng(400).integers(0, 256, size=1000, dtype=np.uint8).tobytes()),
    ]
    for name, p in payloads:
        enc = p + struct.pack("<I", crc32c(p))
        if name == "crc32c_check":
            assert enc[-4:] == struct.pack("<I", 0xE3069283)
        arr = np.frombuffer(p, dtype=np.uint8).reshape(len(p))
        add(name, {"name": "crc32c"}, arr, enc, True, CRC32C_PRODUCER)


# ---- bytes (big endian) -------------------------------------------------------------------------
def bytes_big_cases():
    rng = np.random.default_rng(500)
    i32 = le(rng.integers(-(1 << 31), 1 << 31, size=(6, 7), dtype=np.int32))
    i32.flat[:4] = [0, -1, np.iinfo(np.int32).min, np.iinfo(np.int32).max]
    f64 = le(rng.normal(0.0, 1e3, size=(5, 8)))
    f64.flat[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324]
    c64 = le((rng.normal(size=(4, 5)) + 1j * rng.normal(size=(4, 5))).astype(np.complex64))
    c64.flat[0] = np.complex64(1.5 - 2.25j)
    for name, arr, big in (("bytes_big_int32", i32, ">i4"), ("bytes_big_float64", f64, ">f8"),
                           ("bytes_big_complex64", c64, ">c8")):
        enc = arr.astype(big).tobytes()
        assert np.frombuffer(enc, dtype=big).astype(arr.dtype).tobytes() == arr.tobytes()
        add(name, {"name": "bytes", "configuration": {"endian": "big"}}, arr, enc, True, "numpy astype big-endian")
    # A hand-checked element: 1.5 - 2.25j as two big-endian float32s.
    assert c64.astype(">c8").tobytes()[:8] == struct.pack(">ff", 1.5, -2.25)


def main():
    if os.path.isdir(OUT):
        for f in os.listdir(OUT):
            if f.endswith((".raw", ".enc", ".dec")) or f == "manifest.json":
                os.remove(os.path.join(OUT, f))
    os.makedirs(OUT, exist_ok=True)
    gzip_cases()
    zstd_cases()
    blosc_cases()
    crc32c_cases()
    bytes_big_cases()
    numcodecs_cases()
    bit_filter_cases()
    categorize_cases()
    manifest = {
        "generator": "scripts/gen_codec_fixtures.py",
        "numpy": np.__version__,
        "numcodecs": numcodecs.__version__,
        "cases": CASES,
    }
    # One case per line: readable, and small diffs when a case changes.
    lines = ["{"]
    for k in ("generator", "numpy", "numcodecs"):
        lines.append(f" {json.dumps(k)}: {json.dumps(manifest[k])},")
    lines.append(' "cases": [')
    lines.append(",\n".join("  " + json.dumps(c) for c in CASES))
    lines.append(" ]")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == manifest
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        f.write(text)
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"{len(CASES)} cases, {total} bytes in {os.path.relpath(OUT, ROOT)}")
    assert total < 320_000, total


if __name__ == "__main__":
    main()
