"""Fails the site's build when a public C++ or Python name has no reference entry.

C++: every public name Doxygen finds in include/zarrpp (namespaces zarrpp and zarrpp::codec, not
detail): classes, structs, their public members, functions, variables, types and enumerators must
carry a documentation comment (`///`, `///<`); an override counts as documented when what it
overrides is, a member of a group (`/// @{ ... /// @}`) when the group's first member is
(Doxygen's DISTRIBUTE_GROUP_DOC), and destructors and copy / move members need none. The
reference page renders them all (breathe).
Python: every name in `zarrpp.__all__` (modules among them: their own `__all__` or public names),
`zarrpp.dask`, `zarrpp.xarray`, and the public members of their classes, must have a docstring and
an entry in the site (autodoc).

A docstring that is only a generated signature (pybind11's, @dataclass's) does not count. There
are no exceptions: a public name without an entry fails the build. (While the reference was
written, a list of the names still missing one shrank from 616 to none and was then removed.)
"""
import importlib
import inspect
import os
import re
import xml.etree.ElementTree as ET

from sphinx.util import logging

logger = logging.getLogger(__name__)

PUBLIC_SECTIONS = {"public-func", "public-attrib", "public-type", "public-static-func", "public-static-attrib",
                   "protected-func", "protected-attrib", "protected-type", "protected-static-func",
                   "func", "var", "typedef", "enum", "define"}
PY_MODULES = ["zarrpp", "zarrpp.dask", "zarrpp.xarray"]


def has_text(el):
    return el is not None and "".join(el.itertext()).strip() != ""


def documented(member):
    return has_text(member.find("briefdescription")) or has_text(member.find("detaileddescription"))


def special_member(m, cname):
    """A destructor, or a copy / move constructor or assignment: what they do goes without saying."""
    name, args = m.findtext("name"), m.findtext("argsstring") or ""
    own = cname.split("::")[-1]
    if name.startswith("~"):
        return True
    if name in (own, "operator=") and re.fullmatch(rf"\((const )?{own} ?&&?\).*", args):
        return True
    return False


def cpp_names(xml_dir):
    """{qualified name: documented?} for every public C++ name in the Doxygen XML."""
    names, by_id = {}, {}
    index = ET.parse(os.path.join(xml_dir, "index.xml")).getroot()
    for comp in index.findall("compound"):
        if comp.get("kind") not in ("class", "struct", "namespace", "union"):
            continue
        cname = comp.findtext("name")
        if not cname.startswith("zarrpp") or "detail" in cname.split("::"):
            continue
        root = ET.parse(os.path.join(xml_dir, comp.get("refid") + ".xml")).getroot()
        cdef = root.find("compounddef")
        if cdef.get("prot", "public") != "public":
            continue
        if comp.get("kind") != "namespace":
            names[cname] = documented(cdef)
        for sec in cdef.findall("sectiondef"):
            # Member groups (/// @{ ... @}) are "user-defined" sections: their members count by
            # their own protection, as every other section's.
            if sec.get("kind") not in PUBLIC_SECTIONS and sec.get("kind") != "user-defined":
                continue
            for m in sec.findall("memberdef"):
                by_id[m.get("id")] = m
                # Protected members are API too: what a store or a test wrapper implements.
                if m.get("prot") not in ("public", "protected") or m.get("kind") == "friend" or \
                        special_member(m, cname):
                    continue
                qual = f"{cname}::{m.findtext('name')}"
                if m.get("kind") == "function" and m.findtext("argsstring"):
                    qual += m.findtext("argsstring").split(")")[0] + ")"
                names[qual] = (m, cname)
                if m.get("kind") == "enum":
                    for v in m.findall("enumvalue"):
                        names[f"{cname}::{m.findtext('name')}::{v.findtext('name')}"] = documented(v)
    out = {}
    for qual, v in names.items():
        if isinstance(v, bool):
            out[qual] = v
            continue
        m, _ = v
        ok = documented(m)
        for r in m.findall("reimplements"):
            base = by_id.get(r.get("refid"))
            ok = ok or (base is not None and documented(base))
        out[qual] = ok
    return out


def py_public(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items() if not n.startswith("_") and
                 getattr(v, "__module__", "").startswith("zarrpp") and not inspect.ismodule(v)]
    return list(names)


SIGNATURE_ONLY = re.compile(r"^[\w.]+\(.*\)(\s*->\s*.+)?$", re.S)


def written_doc(obj):
    """Whether `obj` has a docstring someone wrote: not empty, and not only the signature that
    pybind11 or @dataclass generate ("describe(self: Store) -> str", "Zstd(level: int = 0)")."""
    if isinstance(obj, (classmethod, staticmethod)):
        obj = obj.__func__
    doc = (getattr(obj, "__doc__", None) or "").strip()
    if isinstance(obj, property) and not doc and obj.fget is not None:
        doc = (obj.fget.__doc__ or "").strip()
    lines = [line for line in doc.splitlines() if line.strip()]
    return bool(lines) and not (len(lines) <= 2 and all(SIGNATURE_ONLY.match(line.strip()) for line in lines))


def py_names():
    """{qualified name: documented?} for every public Python name."""
    out, seen = {}, set()

    def visit_module(mod):
        if mod.__name__ in seen:
            return
        seen.add(mod.__name__)
        out[mod.__name__] = bool((mod.__doc__ or "").strip())
        for n in py_public(mod):
            obj = getattr(mod, n)
            if inspect.ismodule(obj):
                visit_module(obj)
                continue
            qual = f"{mod.__name__}.{n}"
            # Data (constants) carry no docstring of their own: their entry (autodoc's `#:`) is what counts.
            code = inspect.isclass(obj) or callable(obj)
            out[qual] = written_doc(obj) or not code
            # An alias (ZstdCodec = Zstd) is "alias of Zstd" on the page: its members are Zstd's.
            if inspect.isclass(obj) and obj.__name__ == n:
                visit_members(obj, qual)
            # An object of a zarrpp class (zarrpp.config): the class and its members are API too.
            elif not code and type(obj).__module__.startswith("zarrpp"):
                cls = type(obj)
                cqual = f"{cls.__module__}.{cls.__qualname__}"
                out[cqual] = written_doc(cls)
                visit_members(cls, cqual)

    def visit_members(cls, qual):
        # Its own members and those it inherits from zarrpp's classes (not Python's or pybind's).
        members = {}
        for base in reversed(cls.__mro__):
            if base is cls or (base.__module__ or "").startswith("zarrpp"):
                members.update(vars(base))
        for mname, mv in members.items():
            if mname.startswith("_"):
                continue
            # A data attribute (a dataclass field) is documented by its entry, as module data.
            code = callable(mv) or isinstance(mv, (property, classmethod, staticmethod))
            out[f"{qual}.{mname}"] = written_doc(mv) or not code

    for name in PY_MODULES:
        visit_module(importlib.import_module(name))
    return out


def on_build_finished(app, exc):
    if exc is not None:
        return
    xml_dir = app.config.breathe_projects.get("zarrpp")
    missing = {f"cpp {n}" for n, ok in cpp_names(xml_dir).items() if not ok}
    py_domain = app.env.get_domain("py").objects
    for n, ok in py_names().items():
        if not ok or n not in py_domain:
            missing.add(f"py {n}")
    for n in sorted(missing):
        logger.warning(f"reference: {n} has no entry (a documentation comment / docstring and a place in "
                       "docs/reference/)")
    logger.info(f"reference: {len(missing)} public names without an entry")


def setup(app):
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": True}
