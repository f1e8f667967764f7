"""Codecs for ``zarrpp.create_array(..., compressors=..., filters=...)``.

Each class mirrors a Zarr v3 codec; zarrpp's C++ core does the work, and its codec registry holds
each default (zarr-python 3's):

>>> import zarrpp
>>> z = zarrpp.create_array(zarrpp.storage.MemoryStore(), shape=(100,), chunks=(10,), dtype="f8",
...                         compressors=[zarrpp.codecs.Zstd(level=3), zarrpp.codecs.Crc32c()])
>>> [c.to_dict()["name"] for c in z.compressors]
['zstd', 'crc32c']
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any, List, Optional, Sequence, Tuple

from . import _zarrpp

__all__ = ["Codec", "Zstd", "Gzip", "Blosc", "Crc32c", "Bytes", "Transpose", "Numcodec", "from_metadata",
           "ZstdCodec", "GzipCodec", "BloscCodec", "Crc32cCodec", "BytesCodec", "TransposeCodec", "BloscCname",
           "BloscShuffle", "ShardingCodec", "VLenUTF8Codec", "VLenBytesCodec", "Endian", "ShardingCodecIndexLocation"]


def _default(codec: str, key: str) -> Any:
    """A codec's default for ``key``, from its entry in the C++ registry."""
    return _zarrpp.codec_defaults(codec)[key]


class Codec:
    """Base class of zarrpp's codec descriptions."""

    name: str = ""

    def _spec(self) -> Tuple[str, dict]:
        raise NotImplementedError

    def to_dict(self) -> dict:
        """The codec as it appears in zarr.json."""
        name, cfg = self._spec()
        return {"name": name, "configuration": cfg}


@dataclass(frozen=True)
class Zstd(Codec):
    """``zstd``: Zstandard compression (bytes -> bytes)."""

    level: int = _default("zstd", "level")
    checksum: bool = _default("zstd", "checksum")
    name = "zstd"

    def _spec(self):
        return "zstd", {"level": int(self.level), "checksum": bool(self.checksum)}


@dataclass(frozen=True)
class Gzip(Codec):
    """``gzip``: RFC 1952 compression (bytes -> bytes)."""

    level: int = _default("gzip", "level")
    name = "gzip"

    def _spec(self):
        return "gzip", {"level": int(self.level)}


_SHUFFLE_NAMES = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle",
                  "noshuffle": "noshuffle", "shuffle": "shuffle", "bitshuffle": "bitshuffle",
                  None: "auto", "auto": "auto"}


@dataclass(frozen=True)
class Blosc(Codec):
    """``blosc``: Blosc 1 compression (bytes -> bytes); zarr-python's ``BloscCodec``. By default
    zstd at level 5, as zarr-python 3.

    ``shuffle`` is "noshuffle", "shuffle", "bitshuffle" (or 0/1/2), or None for automatic
    (bit-shuffle for 1-byte types, byte-shuffle otherwise); ``typesize`` 0 means the data type's
    size. Both are resolved when the array is created.
    """

    cname: Any = _default("blosc", "cname")
    clevel: int = _default("blosc", "clevel")
    shuffle: Any = None
    typesize: int = 0
    blocksize: int = _default("blosc", "blocksize")
    name = "blosc"

    def __post_init__(self):
        key = self.shuffle.name if hasattr(self.shuffle, "name") else self.shuffle  # enum-like values
        if isinstance(key, str):
            key = key.lower()
        if key not in _SHUFFLE_NAMES:
            raise ValueError(f"Blosc: shuffle must be 'noshuffle', 'shuffle', 'bitshuffle', 0, 1, 2 or None, "
                             f"got {self.shuffle!r}")

    def _spec(self):
        key = self.shuffle.name if hasattr(self.shuffle, "name") else self.shuffle
        if isinstance(key, str):
            key = key.lower()
        cname = self.cname.value if isinstance(self.cname, Enum) else str(self.cname)
        return "blosc", {"cname": cname, "clevel": int(self.clevel), "shuffle": _SHUFFLE_NAMES[key],
                         "typesize": int(self.typesize), "blocksize": int(self.blocksize)}


@dataclass(frozen=True)
class Crc32c(Codec):
    """``crc32c``: appends a CRC32C checksum to every chunk and verifies it on read."""

    name = "crc32c"

    def _spec(self):
        return "crc32c", {}


@dataclass(frozen=True)
class Bytes(Codec):
    """``bytes``: the array -> bytes serializer (little or big endian)."""

    endian: str = "little"
    name = "bytes"

    def _spec(self):
        return "bytes", {"endian": self.endian}


@dataclass(frozen=True)
class Transpose(Codec):
    """``transpose``: an array -> array filter storing dimensions in ``order``."""

    order: Tuple[int, ...] = field(default_factory=tuple)
    name = "transpose"

    def _spec(self):
        return "transpose", {"order": [int(o) for o in self.order]}


class Numcodec(Codec):
    """A numcodecs filter or compressor, as zarr-python 3 names it in zarr.json ("numcodecs.<id>",
    configuration without "id"): ``Numcodec("delta", dtype="<i4")``, ``Numcodec("lz4")``. zarrpp
    implements delta, fixedscaleoffset, quantize, astype, bitround, packbits, categorize (array -> array) and
    zlib, lz4, bz2, lzma, shuffle, gzip, zstd, blosc (bytes -> bytes). A numcodecs object
    (``numcodecs.LZ4()``) is accepted wherever a codec is."""

    def __init__(self, codec_id: str, **config: Any):
        self.codec_id = str(codec_id)
        self.config = dict(config)
        self.name = "numcodecs." + self.codec_id

    @classmethod
    def from_numcodecs(cls, obj: Any) -> "Numcodec":
        """The codec of a numcodecs codec object (its ``get_config()``)."""
        cfg = dict(obj.get_config())
        return cls(cfg.pop("id"), **cfg)

    def _spec(self):
        return self.name, dict(self.config)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        return f"Numcodec({self.codec_id!r}{', ' if args else ''}{args})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Numcodec) and (self.name, self.config) == (other.name, other.config)


class BloscCname(str, Enum):
    """zarr-python's Blosc compressor names."""
    lz4 = "lz4"
    lz4hc = "lz4hc"
    blosclz = "blosclz"
    zstd = "zstd"
    snappy = "snappy"
    zlib = "zlib"


class Endian(str, Enum):
    """zarr-python's byte orders of the ``bytes`` codec (``Bytes(endian=Endian.big)``)."""
    little = "little"
    big = "big"


class ShardingCodecIndexLocation(str, Enum):
    """Where a shard's index lies; zarrpp writes it at the end (``start`` is read, not written)."""
    start = "start"
    end = "end"


class BloscShuffle(str, Enum):
    """zarr-python's Blosc shuffle modes."""
    noshuffle = "noshuffle"
    shuffle = "shuffle"
    bitshuffle = "bitshuffle"

    @classmethod
    def from_int(cls, num: int) -> "BloscShuffle":
        """The mode of numcodecs' number: 0 noshuffle, 1 shuffle, 2 bitshuffle."""
        return [cls.noshuffle, cls.shuffle, cls.bitshuffle][num]


@dataclass(frozen=True)
class ShardingCodec(Codec):
    """zarr-python's ``ShardingCodec``: chunks of ``chunk_shape`` (the inner chunks) stored together
    in shards (the array's chunk grid), encoded with ``codecs``. zarrpp writes the index at the end
    with ``bytes`` + ``crc32c`` (zarr-python's default); other index settings are refused."""

    chunk_shape: Tuple[int, ...] = field(default_factory=tuple)
    codecs: Any = None
    index_codecs: Any = None
    index_location: Any = "end"
    name = "sharding_indexed"

    def __post_init__(self):
        loc = self.index_location.value if isinstance(self.index_location, Enum) else self.index_location
        if loc != "end":
            raise ValueError(f"ShardingCodec: zarrpp writes the shard index at the end, got index_location={loc!r}")
        if self.index_codecs is not None:
            names = [c.name for c in _as_list(self.index_codecs, "index_codecs")]
            if names not in (["bytes", "crc32c"], ["bytes"]) or any(
                    getattr(c, "endian", "little") != "little" for c in _as_list(self.index_codecs, "index_codecs")):
                raise ValueError("ShardingCodec: zarrpp writes the index with bytes (little endian) + crc32c, "
                                 f"got {names}")

    def _spec(self):
        raise ValueError("ShardingCodec is given as create(codecs=[ShardingCodec(...)]) or "
                         "create_array(serializer=ShardingCodec(...)), or use shards=")


@dataclass(frozen=True)
class VLenUTF8Codec(Codec):
    """zarr-python's serializer for string arrays (zarrpp picks it for dtype=str)."""
    name = "vlen-utf8"

    def _spec(self):
        return "vlen-utf8", {}


@dataclass(frozen=True)
class VLenBytesCodec(Codec):
    """zarr-python's serializer for bytes arrays (zarrpp picks it for dtype=bytes)."""
    name = "vlen-bytes"

    def _spec(self):
        return "vlen-bytes", {}


# zarr-python's class names.
ZstdCodec, GzipCodec, BloscCodec, Crc32cCodec, BytesCodec, TransposeCodec = Zstd, Gzip, Blosc, Crc32c, Bytes, Transpose


def from_metadata(doc: dict) -> Optional[Codec]:
    """The codec object for one entry of zarr.json's ``codecs`` (None when zarrpp has no class)."""
    name = doc.get("name")
    cfg = doc.get("configuration") or {}
    if name in ("zstd", "gzip", "blosc"):
        cls: Any = {"zstd": Zstd, "gzip": Gzip, "blosc": Blosc}[name]
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in cfg.items() if k in known})
    if name == "crc32c":
        return Crc32c()
    if name == "bytes":
        return Bytes(endian=cfg.get("endian", "little"))
    if name == "transpose":
        return Transpose(order=tuple(cfg.get("order", ())))
    if name == "vlen-utf8":
        return VLenUTF8Codec()
    if name == "vlen-bytes":
        return VLenBytesCodec()
    if isinstance(name, str) and name.startswith("numcodecs."):
        return Numcodec(name[len("numcodecs."):], **cfg)
    return None


def _as_list(value: Any, what: str) -> Sequence[Codec]:
    """Normalises ``compressors=``/``filters=``: None, one codec, or a sequence of codecs."""
    if value is None:
        return []
    if isinstance(value, Codec):
        return [value]
    if hasattr(value, "codec_id") and hasattr(value, "get_config"):  # a numcodecs object
        return [Numcodec.from_numcodecs(value)]
    if isinstance(value, str):  # a codec's name: that codec with its default configuration
        value = {"name": value}
    if isinstance(value, dict):
        c = from_metadata(value)
        if c is None:
            raise ValueError(f"{what}: unknown codec {value!r}")
        return [c]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{what}: expected a zarrpp.codecs codec, a list of them or None, got {value!r}") from None
    out: List[Codec] = []
    for c in items:
        out.extend(_as_list(c, what))
    return out


# zarr.config's "codecs" table: the class zarr-python implements each codec name with (zarrpp's
# own codecs stand for them; zarrpp.config refuses another class).
ZARR_PYTHON_CODEC_CLASSES = {
    "blosc": "zarr.codecs.blosc.BloscCodec", "gzip": "zarr.codecs.gzip.GzipCodec",
    "zstd": "zarr.codecs.zstd.ZstdCodec", "bytes": "zarr.codecs.bytes.BytesCodec",
    "endian": "zarr.codecs.bytes.BytesCodec", "crc32c": "zarr.codecs.crc32c_.Crc32cCodec",
    "sharding_indexed": "zarr.codecs.sharding.ShardingCodec", "transpose": "zarr.codecs.transpose.TransposeCodec",
    "vlen-utf8": "zarr.codecs.vlen_utf8.VLenUTF8Codec", "vlen-bytes": "zarr.codecs.vlen_utf8.VLenBytesCodec",
    **{f"numcodecs.{n.lower()}": f"zarr.codecs.numcodecs.{n}" for n in (
        "BZ2", "CRC32", "CRC32C", "LZ4", "LZMA", "ZFPY", "Adler32", "AsType", "BitRound", "Blosc", "Delta",
        "FixedScaleOffset", "Fletcher32", "GZip", "JenkinsLookup3", "PCodec", "PackBits", "Shuffle", "Quantize",
        "Zlib", "Zstd")},
}
