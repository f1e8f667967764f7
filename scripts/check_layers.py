#!/usr/bin/env python3
"""Checks the rooms and layering docs/architecture.md claims, so that a change breaking them fails a test.

1. Includes go down only: a file of a room (src/<room>/, include/zarrpp/<room>/; a sub-folder such
   as src/store/remote/ belongs to its room's layer) includes headers of the rooms below it and of
   its own, never of a room above or beside it.
2. A room's private headers (src/<room>/*.hpp) are its own: another room includes only those its
   room lists in INTERFACE (the few internals rooms share, each with its reason there).
3. No folder of src/ (a sub-folder counts as its own) holds more than a quarter of src/'s lines.
4. A codec's name appears in the codec layer only: outside src/codec/ and include/zarrpp/codec/
   no C++ string literal is a codec's name (the names are read from the codec sources), and in
   Python only the codec classes (python/zarrpp/codecs.py) spell them.
5. Nothing below the metadata knows the Zarr format: not the layers below it (core/, grid/,
   store/, io/), and not the data path (plans, the engine, element copies, the pipeline, chunk
   I/O), which runs on what the metadata says. The codec layer's v2 translation and the node
   room are where the formats meet.
6. The Python package is glue, in modules by concept: no module of python/zarrpp/ over 700 lines,
   no import cycle among them (imports under ``if TYPE_CHECKING:`` are annotations only), and the
   core objects (``._core``) touched only by the modules that wrap them (CORE_WRAPPERS).
7. docs/architecture.md, which states these rules, stays a ten-minute read: at most 2,500 words.

Usage: check_layers.py [REPO]   (exit status 1 and one line per violation when broken)
"""
import ast
import re
import sys
from pathlib import Path

# Which rooms each room may include (its own included). core knows nothing of Zarr; io is the
# .npy reader beside metadata; grid maps indices (metadata's shapes); store moves bytes; codec
# encodes (metadata's codec descriptions, store keys for partial reads); select turns selections
# into plans over a grid and copies elements by them; node reads and writes the documents of a
# hierarchy's nodes (both formats, consolidated metadata); array runs plans through the codecs
# (Array, growth, the engine); hierarchy is groups and the operations on whole subtrees (copy,
# conversion); view draws arrays (its own library, with libpng); testing holds store doubles
# (its own library).
ALLOWED = {
    "core": {"core"},
    "io": {"core", "io"},
    "metadata": {"core", "metadata"},
    "grid": {"core", "metadata", "grid"},
    "store": {"core", "store"},
    "codec": {"core", "metadata", "store", "codec"},
    "select": {"core", "metadata", "grid", "codec", "select"},
    "node": {"core", "metadata", "store", "codec", "node"},
    "array": {"core", "metadata", "grid", "store", "codec", "select", "node", "array"},
    "hierarchy": {"core", "metadata", "grid", "store", "codec", "select", "node", "array", "hierarchy"},
    "view": {"core", "metadata", "grid", "store", "codec", "select", "array", "view"},
    "testing": {"core", "store", "testing"},
}
# The private headers (src/<room>/) that other rooms may include, with why; any other is the room's own.
INTERFACE = {
    "core": {"retry.hpp": "the one retry policy of stores and swaps",
             "temp_names.hpp": "temporary names beside a file (stores, .npy output)",
             "buffer_ops.hpp": "copies and fills of chunk buffers",
             "dtype_table.hpp": "the one table of data types' names, read by the metadata and \"auto\"",
             "waiting_threads.hpp": "blocking requests in flight on waiting threads",
             "test_pause.hpp": "the tests' pause points inside multi-step changes",
             "time_source.hpp": "the clock, sleeps and seeds a simulation replaces",
             "xml_escape.hpp": "XML text for S3 bodies and SVG"},
    "grid": {"domain_change.hpp": "what a grid becomes when growth moves the domain"},
    "codec": {"chunk_codec.hpp": "the partial decoders and encoders the engine drives"},
    "select": {"plan.hpp": "plans, run by the engine and drawn by the pictures",
               "broadcast.hpp": "NumPy broadcasting of written data",
               "scatter.hpp": "element copies between chunks and views, by plan",
               "task_batches.hpp": "a plan's tasks made in batches of whole stored objects as the engine runs"},
    "node": {"node.hpp": "the node documents Array, Group and conversion read and write"},
    "array": {"engine.hpp": "snapshots and the engine, for copying and converting subtrees"},
}
# Public headers that only forward to where their header moved (they belong to no room).
FORWARDING = {"include/zarrpp/array/picture.hpp", "include/zarrpp/array/selection.hpp",
              "include/zarrpp/array/indexing.hpp", "include/zarrpp/array/group.hpp",
              "include/zarrpp/array/convert.hpp", "include/zarrpp/store/testing.hpp"}
# The largest share of src/'s lines one folder may hold.
MAX_ROOM_SHARE = 0.25
# Generated or top-level headers that belong to no layer (the version; the umbrella header for
# users, which no layer may include).
NEUTRAL = {"zarrpp/version.hpp"}
BELOW_METADATA = ("core", "io", "grid", "store")
# Codec names that are also other things' names (the "bytes" data type).
AMBIGUOUS = {"bytes"}
# Lines that spell a codec's name for another reason: (file, name) -> why.
EXEMPT = {("src/array/spec.cpp", "crc32c"): "ArraySpec's field of that name, named in a message"}
# The data path (plans, the engine, element copies, the pipeline and chunk I/O) runs the same for
# both formats: it reads what the metadata says, never which format said it.
DATA_PATH = ["src/array/engine.cpp", "src/array/engine.hpp", "src/select/plan.cpp", "src/select/plan.hpp",
             "src/select/indexing.cpp", "src/select/scatter.cpp", "src/select/scatter.hpp", "src/codec/pipeline.cpp",
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


def private_room(target: str, here: Path, repo: Path):
    """The room whose private header a quoted include names (src/<room>/...), else None."""
    resolved = (here.parent / target).resolve()
    try:
        rel = resolved.relative_to((repo / "src").resolve()).parts
    except ValueError:
        return None, None
    return (rel[0], "/".join(rel[1:])) if len(rel) > 1 else (None, None)


def check_includes(repo: Path):
    bad = []
    for f in sources(repo, "src", "include/zarrpp"):
        layer = layer_of(f, repo)
        if layer is None:
            continue
        if str(f.relative_to(repo)) in FORWARDING:
            text = code_of(f.read_text(encoding="utf-8"), keep_strings=True)
            if len(INCLUDE.findall(text)) != 1 or re.search(r"^\s*(namespace|class|struct|inline|using)\b", text, re.M):
                bad.append(f"{f.relative_to(repo)}: listed in FORWARDING but does more than include one header")
            continue
        if layer not in ALLOWED:
            bad.append(f"{f.relative_to(repo)}: folder '{layer}' is no layer of docs/architecture.md")
            continue
        text = f.read_text(encoding="utf-8")
        for m in INCLUDE.finditer(code_of(text, keep_strings=True)):
            name = m.group(1) or m.group(2)
            target = included_layer(name, f, repo)
            line = code_of(text, keep_strings=True).count("\n", 0, m.start()) + 1
            if target is not None and target not in ALLOWED[layer]:
                bad.append(f"{f.relative_to(repo)}:{line}: the {layer} room includes \"{name}\""
                           f" ({target} is not below it)")
                continue
            room, header = private_room(name, f, repo) if m.group(1) else (None, None)
            if room is not None and room != layer and header not in INTERFACE.get(room, {}):
                bad.append(f"{f.relative_to(repo)}:{line}: the {layer} room includes \"{name}\", a private"
                           f" header of {room} (not in its INTERFACE in check_layers.py)")
    return bad


def check_room_sizes(repo: Path):
    lines = {}
    for f in sources(repo, "src"):
        folder = str(f.parent.relative_to(repo))
        lines[folder] = lines.get(folder, 0) + f.read_text(encoding="utf-8").count("\n")
    total = sum(lines.values())
    return [f"{folder}/: {n} of src/'s {total} lines ({n / total:.0%}), more than {MAX_ROOM_SHARE:.0%}; split it"
            f" by concept" for folder, n in sorted(lines.items()) if n > MAX_ROOM_SHARE * total]


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


MAX_PY_MODULE_LINES = 700
# The modules whose classes hold a core object (Array, Group, and their shared base): every other
# module goes through their methods, so the array's casting and order are never skipped.
CORE_WRAPPERS = {"_array.py", "_group.py", "_node.py"}


def python_imports(tree: ast.AST):
    """The package modules a module imports when it runs (not those under ``if TYPE_CHECKING:``)."""
    skip = {id(n) for node in ast.walk(tree)
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING" for n in ast.walk(node)}
    found = set()
    for n in ast.walk(tree):
        if id(n) not in skip and isinstance(n, ast.ImportFrom) and n.level == 1:
            found.update([n.module.split(".")[0]] if n.module else [a.name for a in n.names])
    return found


def import_cycle(graph):
    """One cycle of the import graph as a list of modules, or None."""
    state = {}

    def visit(m, path):
        state[m] = "open"
        for d in sorted(graph.get(m, ())):
            if state.get(d) == "open":
                return path[path.index(d):] + [d]
            if d not in state:
                found = visit(d, path + [d])
                if found:
                    return found
        state[m] = "done"
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m, [m])
            if found:
                return found
    return None


def check_python_package(repo: Path):
    bad, graph = [], {}
    for f in sorted((repo / "python/zarrpp").glob("*.py")):
        text = f.read_text(encoding="utf-8")
        rel = f.relative_to(repo)
        if text.count("\n") > MAX_PY_MODULE_LINES:
            bad.append(f"{rel}: {text.count(chr(10))} lines, more than {MAX_PY_MODULE_LINES}; split it by concept")
        graph[f.stem] = python_imports(ast.parse(text))
        if f.name not in CORE_WRAPPERS:
            for n, line in enumerate(text.splitlines(), 1):
                if re.search(r"\._core\b", line.split("#")[0]):
                    wrappers = ", ".join(sorted(CORE_WRAPPERS))
                    bad.append(f"{rel}:{n}: ._core outside the modules that wrap it ({wrappers})")
    cycle = import_cycle(graph)
    if cycle:
        bad.append("python/zarrpp: import cycle " + " -> ".join(cycle))
    return bad


MAX_ARCHITECTURE_WORDS = 2500


def check_architecture_doc(repo: Path):
    words = len((repo / "docs/architecture.md").read_text(encoding="utf-8").split())
    if words > MAX_ARCHITECTURE_WORDS:
        return [f"docs/architecture.md: {words} words, more than {MAX_ARCHITECTURE_WORDS}; move details to a page "
                "of their own"]
    return []


def main():
    repo = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    bad = (check_includes(repo) + check_room_sizes(repo) + check_codec_names(repo) + check_format_below_metadata(repo)
           + check_python_package(repo) + check_architecture_doc(repo))
    for b in bad:
        print(b)
    if bad:
        print(f"check_layers: {len(bad)} violation(s) of the layering in docs/architecture.md")
        return 1
    print("check_layers: includes go down only; rooms keep their private headers; no room over "
          f"{MAX_ROOM_SHARE:.0%} of src/; codec names stay in the codec layer; nothing below metadata knows the "
          f"format; Python modules under {MAX_PY_MODULE_LINES} lines, without cycles, ._core only where it is wrapped; "
          f"docs/architecture.md under {MAX_ARCHITECTURE_WORDS} words")
    return 0


if __name__ == "__main__":
    sys.exit(main())
