"""Sphinx configuration of zarrpp's documentation site (docs/; built by scripts/build_docs.sh).

Pages are Markdown (MyST). Every code snippet runs while the site is built (_ext/zarrpp_snippets.py)
and the reference must cover every public C++ and Python name (_ext/zarrpp_reference.py). The
build needs the built library: ZARRPP_BUILD_DIR names the CMake build folder, ZARRPP_DOXYGEN_XML
the Doxygen XML of include/zarrpp (both set by scripts/build_docs.sh).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))

project = "zarrpp"
author = "the zarrpp authors"
copyright = "2026, the zarrpp authors"  # noqa: A001 (Sphinx's name)

extensions = [
    "myst_parser",
    "breathe",
    "sphinx.ext.autodoc",
    "zarrpp_snippets",
    "zarrpp_reference",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Doxyfile"]
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]
suppress_warnings = ["myst.header"]  # pages may start below level 1 (architecture.md's sections)

html_theme = "alabaster"
html_title = "zarrpp"
html_theme_options = {"page_width": "1180px", "sidebar_width": "250px"}
# The pictures scripts/build_docs.sh draws with this build (pictures/ at the site's root).
html_extra_path = [os.environ["ZARRPP_DOCS_EXTRA"]] if os.environ.get("ZARRPP_DOCS_EXTRA") else []

breathe_projects = {"zarrpp": os.environ.get("ZARRPP_DOXYGEN_XML", "")}
breathe_default_project = "zarrpp"
breathe_domain_by_extension = {"hpp": "cpp"}
cpp_index_common_prefix = ["zarrpp::"]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
