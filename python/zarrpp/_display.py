"""How arrays and groups show themselves: progress bars, info tables, HTML."""
from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

from ._node import _store_url

if TYPE_CHECKING:  # annotations only: the classes import this module
    from ._array import Array


class _Progress:
    """What a ``progress=`` argument asks for, as callbacks for the core: None or False for none,
    True for a tqdm bar (closed on leaving the ``with`` block), or the caller's callable, called
    as ``progress(objects, nbytes)`` for each stored object finished."""

    def __init__(self, progress: Any, desc: str, *, total: Optional[int] = None, unit: str = "B") -> None:
        self._bar: Any = None
        self._user: Any = None
        self._unit = unit
        self._failed = False
        if progress is None or progress is False:
            return
        if progress is True:
            try:
                from tqdm import tqdm  # type: ignore[import]
            except ImportError:
                raise ImportError("progress=True draws a bar with tqdm, which is not installed (Debian: apt-get "
                                  "install python3-tqdm; or pip install tqdm); pass a callable instead") from None
            self._bar = tqdm(total=total, unit=unit, unit_scale=True, unit_divisor=1024 if unit == "B" else 1000,
                             desc=desc)
        elif callable(progress):
            self._user = progress
        else:
            raise TypeError(f"progress must be a callable, True or None, not {type(progress).__name__}")

    def __enter__(self) -> "_Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.close()

    @property
    def step(self) -> Any:
        """The core's callback (objects, nbytes), or None."""
        if self._bar is None and self._user is None:
            return None
        return self._step

    def _step(self, objects: int, nbytes: int) -> None:
        if self._failed:
            return
        try:
            if self._user is not None:
                self._user(objects, nbytes)
            else:
                self._bar.update(nbytes if self._unit == "B" else objects)
        except BaseException:
            self._failed = True  # reported once (sys.unraisablehook), then no more calls
            raise

    @property
    def count(self) -> Any:
        """The core's callback (done, total) of a copy, chunk by chunk, or None."""
        if self._bar is None and self._user is None:
            return None
        return self._count

    def _count(self, done: int, total: int) -> None:
        if self._bar is not None and self._bar.total != total:
            self._bar.total = total
        self._step(1, 0)


def _fan_out(steps: List[Any]) -> Any:
    """One callback calling each of ``steps`` (the open progress blocks of a handle), or None."""
    if not steps:
        return None
    if len(steps) == 1:
        return steps[0]
    current = list(steps)

    def step(objects: int, nbytes: int) -> None:
        for s in current:
            s(objects, nbytes)
    return step


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024
    return str(n)


def _codec_names(a: Array) -> str:
    filters, serializer, compressors = a._codec_lists()
    names = []
    for c in (*filters, *([] if serializer is None else [serializer]), *compressors):
        name = getattr(c, "name", None) or (c.get("name") or c.get("id") if isinstance(c, dict) else None)
        names.append(str(name or c))
    return " \u2192 ".join(names) or "none"


def _html_table(rows: List[Tuple[str, str]]) -> str:
    cells = "".join(f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(k)}</th>"
                    f"<td style='text-align:left'>{html.escape(v)}</td></tr>" for k, v in rows)
    return f"<table>{cells}</table>"


def _shape_text(get: Any) -> str:
    try:
        return str(get())
    except NotImplementedError:  # chunks of several sizes (a rectilinear grid)
        return "<variable>"


def _array_rows(a: Array, stored: bool = True) -> List[Tuple[str, str]]:
    """The essentials of the notebook views; ``stored`` adds what listing the store tells."""
    rows = [("Shape", str(a.shape)), ("Domain", ", ".join(f"[{lo}, {hi})" for lo, hi in a.domain)),
            ("Data type", str(a._dtype) if a._dtype.kind not in "VO" else a._type_name),
            ("Chunks", _shape_text(lambda: a.chunks))]
    if a._sharded:
        rows.append(("Shards", _shape_text(lambda: a.shards)))
    rows.append(("Codecs", _codec_names(a)))
    if stored:
        objects = "shards" if a._sharded else "chunks"
        try:
            n = a.nbytes_stored()
            rows.append(("Stored", f"{a._nshards_stored()} of {a.nshards} {objects}, "
                                   f"{_human(n)}{' B' if n < 1024 else ''} with the metadata"))
        except Exception as e:  # a view must show what it can: say why this part is missing
            rows.append(("Stored", f"not known: {e}"))
    return rows


def _array_html(a: Array) -> str:
    where = _store_url(a.store) + ("/" + a.path if a.path else "")
    try:
        picture = a.chunk_map_svg()
    except Exception as e:  # e.g. a store that cannot be listed: say so instead of a picture
        picture = f"<p>chunk map not drawn: {html.escape(str(e))}</p>"
    return (f"<div><b>zarrpp.Array</b> <code>{html.escape(where)}</code>"
            f"<div style='display:flex;gap:1.5em;align-items:flex-start'>"
            f"<div>{_html_table(_array_rows(a))}</div><div>{picture}</div></div></div>")


class Info(str):
    """Text that prints as itself at a prompt too (``z.info``, ``g.tree()``): a table of
    "label : value" rows, or lines."""

    rows: List[Any]

    def __new__(cls, rows: Sequence[Any], table: bool = True) -> "Info":
        if table:
            width = max(len(k) for k, _ in rows)
            text = "\n".join(f"{k.ljust(width)} : {v}" for k, v in rows)
        else:
            text = "\n".join(rows)
        obj = super().__new__(cls, text)
        obj.rows = list(rows)
        return obj

    def __repr__(self) -> str:
        return str(self)


def array_info_rows(self: Array) -> List[Tuple[str, str]]:
    """The rows of an array's ``info``."""
    filters, serializer, compressors = self._codec_lists()
    rows = [
        ("Type", "Array"),
        ("Zarr format", str(self.zarr_format)),
        ("Data type", str(self._dtype) if self._dtype.kind not in "VO" else self._type_name),
        ("Fill value", repr(self.fill_value if self._dtype.kind == "O" or self.fill_value is None else
                            self.fill_value.item() if self._dtype.kind != "V" else self.fill_value.tobytes())),
        ("Shape", str(self.shape)),
        ("Domain", str(self.domain)),
        ("Chunk shape", str(self._grid_args()["chunks"]) if not self._rectilinear or
         self._sharded else "<variable>"),
    ]
    if self._rectilinear and self._sharded:
        rows.append(("Shard shape", "<variable>"))
    elif self.shards is not None:
        rows.append(("Shard shape", str(self.shards)))
    rows += [
        ("Order", self.order),
        ("Read-only", str(self.read_only)),
        ("Store type", type(self.store).__name__),
        ("Filters", str(filters)),
        ("Serializer", str(serializer)),
        ("Compressors", str(compressors)),
        ("No. bytes", f"{self.nbytes} ({_human(self.nbytes)})"),
    ]
    if self.attrs:
        rows.append(("Attributes", json.dumps(self.attrs.asdict())))
    return rows
