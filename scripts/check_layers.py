#!/usr/bin/env python3
"""Checks the layering docs/architecture.md claims, so that a change breaking it fails a test.

1. Includes go down only: a file of a layer (src/<layer>/, include/zarrpp/<layer>/) includes
   headers of the layers below it and of its own layer, never of a layer above or beside it.
2. A codec's name appears in the codec layer only: outside src/codec/ and include/zarrpp/codec/
   no C++ string literal is a codec's name (the names are read from the codec sources), and in
   Python only the codec classes (python/zarrpp/codecs.py) spell them.
3. Nothing below the metadata knows the Zarr format: not the layers below it (core/, grid/,
   store/, io/), and not the data path (plans, the engine, element copies, the pipeline, chunk
   I/O), which runs on what the metadata says. The codec layer's v2 translation and the node
   layer (node.cpp, array.cpp, convert.cpp) are where the formats meet.

Usage: check_layers.py [REPO]   (exit status 1 and one line per violation when broken)
"""
import re
import sys
from pathlib import Path

# Which layers each layer may include (its own included). core knows nothing of Zarr; io is the
# .npy reader beside metadata; grid maps indices (metadata's shapes); store moves bytes; codec
# encodes (metadata's codec descriptions, store keys for partial reads); array runs it all.
ALLOWED = {
    "core": {"core"},
    "io": {"core", "io"},
    "metadata": {"core", "metadata"},
    "grid": {"core", "metadata", "grid"},
    "store": {"core", "store"},
    "codec": {"core", "metadata", "store", "codec"},
    "array": {"core", "metadata", "grid", "store", "codec", "array"},
}
# Generated or top-level headers that belong to no layer (the version; the umbrella header for
# users, which no layer may include).
NEUTRAL = {"zarrpp/version.hpp"}
BELOW_METADATA = ("core", "io", "grid", "store")
# Codec names that are also other things' names (the "bytes" data type).
AMBIGUOUS = {"bytes"}
# Lines that spell a codec's name for another reason: (file, name) -> why.
EXEMPT = {("src/array/array.cpp", "crc32c"): "ArraySpec's field of that name, named in a message"}
# The data path (plans, the engine, element copies, the pipeline and chunk I/O) runs the same for
# both formats: it reads what the metadata says, never which format said it.
DATA_PATH = ["src/array/engine.cpp", "src/array/engine.hpp", "src/array/plan.cpp", "src/array/plan.hpp",
             "src/array/indexing.cpp", "src/array/scatter.cpp", "src/array/scatter.hpp", "src/codec/pipeline.cpp",
             "src/codec/chunk_io.cpp", "src/codec/sharding.cpp", "src/codec/chunk_codec.hpp"]
FORMAT = re.compile(r"zarr_format|\bv2[._]|\.v2\b|->v2\b|from_v2|to_v2|as_v2")

INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<(zarrpp/[^>]+)>)', re.M)
# Comments, and the text of string literals (kept as empty quotes), for the checks on code.
COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', re.S)


def code_of(text: str, keep_strings: bool) -> str:
    """The C++ text without comments (line breaks kept), and without string contents unless asked."""
    def blank(m: "re.Match[str]") -> str:
        t = m.group(0)
        if t.startswith('"'):
            return t if keep_strings else '""'
        return "\n" * t.count("\n")
    return COMMENT_OR_STRING.sub(blank, text)


def layer_of(path: Path, repo: Path):
    rel = path.relative_to(repo).parts
    if rel[0] == "src" and len(rel) > 2:
        return rel[1]
    if rel[:2] == ("include", "zarrpp") and len(rel) > 3:
        return rel[2]
    return None


def included_layer(target: str, here: Path, repo: Path):
    if target in NEUTRAL:
        return None
    if target.startswith("zarrpp/"):
        parts = target.split("/")
        return parts[1] if len(parts) > 2 else "umbrella"
    resolved = (here.parent / target).resolve()
    try:
        return layer_of(resolved, repo.resolve())
    except ValueError:
        return "outside"


def sources(repo: Path, *roots):
    for root in roots:
        base = repo / root
        if base.exists():
            yield from sorted(p for p in base.rglob("*") if p.suffix in (".cpp", ".hpp", ".h", ".cc"))


def check_includes(repo: Path):
    bad = []
    for f in sources(repo, "src", "include/zarrpp"):
        layer = layer_of(f, repo)
        if layer is None:
            continue
        if layer not in ALLOWED:
            bad.append(f"{f.relative_to(repo)}: folder '{layer}' is no layer of docs/architecture.md")
            continue
        text = f.read_text(encoding="utf-8")
        for m in INCLUDE.finditer(code_of(text, keep_strings=True)):
            name = m.group(1) or m.group(2)
            target = included_layer(name, f, repo)
            if target is not None and target not in ALLOWED[layer]:
                line = code_of(text, keep_strings=True).count("\n", 0, m.start()) + 1
                bad.append(f"{f.relative_to(repo)}:{line}: the {layer} layer includes \"{name}\""
                           f" ({target} is not below it)")
    return bad


def codec_names(repo: Path):
    names = set()
    for f in sources(repo, "src/codec"):
        text = f.read_text(encoding="utf-8")
        names.update(re.findall(r'kName\s*=\s*"([^"]+)"', text))
        names.update(re.findall(r'"(numcodecs\.[a-z0-9_]+)"', text))
        names.update(re.findall(r'"(vlen-[a-z0-9]+)"', text))
    return names - AMBIGUOUS


def check_codec_names(repo: Path):
    names = codec_names(repo)
    if len(names) < 8:
        return [f"check_layers: found only {sorted(names)} as codec names; the codec sources changed shape"]
    names_re = "|".join(re.escape(n) for n in sorted(names))
    cpp_literal = re.compile(r'"(' + names_re + r')"')
    py_literal = re.compile(r'(["\'])(' + names_re + r')\1')
    bad = []
    cpp = [f for f in sources(repo, "src", "include", "tools", "python/src")
           if layer_of(f, repo) != "codec"]
    py = [f for f in sorted((repo / "python/zarrpp").rglob("*.py")) if f.name != "codecs.py"]
    for f in cpp + py:
        text = f.read_text(encoding="utf-8")
        if f.suffix == ".py":
            lines = [line.split("#")[0] for line in text.splitlines()]
            found = [(n, m.group(2)) for n, line in enumerate(lines, 1) for m in py_literal.finditer(line)]
        else:
            lines = code_of(text, keep_strings=True).splitlines()
            found = [(n, m.group(1)) for n, line in enumerate(lines, 1) for m in cpp_literal.finditer(line)]
        for n, name in found:
            if (str(f.relative_to(repo)), name) not in EXEMPT:
                bad.append(f"{f.relative_to(repo)}:{n}: the codec name \"{name}\" outside the codec layer")
    return bad


def check_format_below_metadata(repo: Path):
    bad = []
    below = list(sources(repo, *(f"src/{layer}" for layer in BELOW_METADATA),
                         *(f"include/zarrpp/{layer}" for layer in BELOW_METADATA)))
    for f in below + [repo / p for p in DATA_PATH]:
        if not f.exists():
            bad.append(f"{f.relative_to(repo)}: listed in check_layers.py's DATA_PATH but missing")
            continue
        for n, line in enumerate(code_of(f.read_text(encoding="utf-8"), keep_strings=False).splitlines(), 1):
            if FORMAT.search(line):
                where = f"the {layer_of(f, repo)} layer" if f in below else "the data path"
                bad.append(f"{f.relative_to(repo)}:{n}: {where} knows the Zarr format")
    return bad


def main():
    repo = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    bad = check_includes(repo) + check_codec_names(repo) + check_format_below_metadata(repo)
    for b in bad:
        print(b)
    if bad:
        print(f"check_layers: {len(bad)} violation(s) of the layering in docs/architecture.md")
        return 1
    print("check_layers: includes go down only; codec names stay in the codec layer; "
          "nothing below metadata knows the format")
    return 0


if __name__ == "__main__":
    sys.exit(main())
