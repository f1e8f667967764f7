"""Runs every code snippet of the site while it is built, and checks what it shows it printing.

Each page's snippets run in order, in one fresh temporary folder per page, against the built
library (ZARRPP_BUILD_DIR: its `zarrpp` CLI first on PATH, its Python package on PYTHONPATH):

- ```python: run in one Python process per page (Debian's /usr/bin/python3), blocks sharing their
  names as one session does. A block with `>>>` prompts is a doctest: what it shows after each
  prompt must be what that line printed.
- ```console: `$ command` lines (a trailing backslash continues one), each run by bash in the page's
  folder; the lines after a command up to the next `$` are what it must print (stdout and stderr).
  A command may fail only when its block shows what it printed.
- ```sh / ```bash: a script run by `bash -euo pipefail` in the page's folder.
- ```cpp: a whole program, compiled against include/zarrpp and the built libzarrpp and run in the
  page's folder.
- ```output right after a sh or cpp block: what that block must print.

The Python package's docstrings, which the reference shows, follow the same rule: examples are
doctests (`>>>`), run with the site; a literal block (`::`) of code is refused.

In shown output, a line `...` stands for any number of lines and `...` inside a line for any text.
A snippet that cannot run while the site is built (the network, hours, GiBs: docs/ci.md's
exemptions) is marked by the line `<!-- not-run: REASON -->` right before it; the page then shows
"Shown, not run: REASON" above it, and the build lists every such snippet. Blocks of data
(text, json, output, toml, yaml, ...) are not run; a block in any other language that cannot
run here (cmake, ...) must carry the marker.

Every failure is a warning at the snippet's line, which `sphinx-build -W --keep-going` (what
scripts/build_docs.sh runs) turns into a failed build.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile

from markdown_it import MarkdownIt
from mdit_py_plugins.colon_fence import colon_fence_plugin
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

RUN = {"python", "console", "sh", "bash", "cpp"}
# Shown data, never code: anything else that is not run must carry the not-run marker (a fence
# without a language too: write ```text for data).
DATA = {"text", "json", "output", "toml", "yaml", "ini", "csv", "xml", "diff", "markdown", "md", "none"}
NOT_RUN = re.compile(r"^<!-- not-run: (.+?) -->$")
NOT_RUN_LINE = re.compile(r"^([ \t]*)<!-- not-run: (.+?) -->[ \t]*$", re.M)
DIRECTIVE = re.compile(r"^\{([\w-]+)\}\s*(.*)$")
CODE_DIRECTIVES = {"code-block", "code", "sourcecode"}
RST_CODE = re.compile(r"^\s*\.\. (code-block|code|sourcecode|literalinclude)::", re.M)
TIMEOUT = 300
# The modules the Python reference documents: their docstrings' examples run too.
DOCTEST_MODULES = ["zarrpp", "zarrpp.codecs", "zarrpp.storage", "zarrpp.errors", "zarrpp.dask", "zarrpp.xarray"]
# Markdown as MyST reads it (CommonMark with colon fences), so every code block the page shows is
# found: fences at any indentation, in lists and quotes, ~~~ and ::: fences, indented blocks.
MD = MarkdownIt("commonmark").use(colon_fence_plugin)


class Block:
    def __init__(self, lang, code, line, not_run):
        self.lang, self.code, self.line, self.not_run = lang, code, line, not_run
        self.output = None  # the ```output block after it, if any


def block_language(tok):
    """The language a code token shows ("" for none, "indented" for an indented block), or None
    for a directive that shows no code (toctree, include, doxygen...)."""
    if tok.type == "code_block":
        return "indented"
    info = tok.info.strip()
    d = DIRECTIVE.match(info)
    if not d:
        return info.split()[0].lower() if info else ""
    name, arg = d.group(1), d.group(2).strip()
    if name in CODE_DIRECTIVES:
        return arg.split()[0].lower() if arg else ""
    if name == "literalinclude" or (name == "eval-rst" and RST_CODE.search(tok.content)):
        return name
    return None


def parse_blocks(text):
    """The page's code blocks in order, with the ```output block right after a block attached to
    it (an output block anywhere else is an error, as "output-orphan")."""
    blocks, marker, prev_block = [], None, None
    for tok in MD.parse(text):
        if tok.type == "html_block":
            m = NOT_RUN.match(tok.content.strip())
            marker, prev_block = (m.group(1) if m else None), None
            continue
        lang = block_language(tok) if tok.type in ("fence", "colon_fence", "code_block") else None
        if lang is None:  # anything else between resets both: they must be right before / after
            marker, prev_block = None, None
            continue
        b = Block(lang, tok.content, tok.map[0] + 1, marker)
        marker = None
        if lang == "output":
            if prev_block is not None and prev_block.lang in ("sh", "bash", "cpp") and prev_block.output is None:
                prev_block.output, prev_block = b, None
                continue
            b.lang = "output-orphan"
        blocks.append(b)
        prev_block = b
    return blocks


def line_matches(want, got):
    if "..." not in want:
        return want == got
    parts = [re.escape(p) for p in want.split("...")]
    return re.fullmatch(".*".join(parts), got, re.S) is not None


def output_matches(want, got):
    """`...` alone on a line matches any number of lines; inside a line, any text."""
    w = [x.rstrip() for x in want.rstrip("\n").split("\n")] if want.strip() else []
    g = [x.rstrip() for x in got.rstrip("\n").split("\n")] if got.strip() else []

    def match(i, j):
        if i == len(w):
            return j == len(g)
        if w[i] == "...":
            return any(match(i + 1, k) for k in range(j, len(g) + 1))
        return j < len(g) and line_matches(w[i], g[j]) and match(i + 1, j + 1)

    return match(0, 0)


def console_commands(code):
    """(command, shown output) pairs of a ```console block."""
    cmds, cur, out = [], None, []
    lines = code.rstrip("\n").split("\n")
    k = 0
    while k < len(lines):
        ln = lines[k]
        if ln.startswith("$ "):
            if cur is not None:
                cmds.append((cur, "\n".join(out)))
            cur, out = ln[2:], []
            while cur.endswith("\\") and k + 1 < len(lines):
                k += 1
                cur = cur[:-1] + "\n" + lines[k]
        elif cur is None:
            raise ValueError(f"a console block must start with '$ ': {ln!r}")
        else:
            out.append(ln)
        k += 1
    if cur is not None:
        cmds.append((cur, "\n".join(out)))
    return cmds


PY_DRIVER = r'''
import doctest, io, json, sys, traceback, contextlib
ns = {"__name__": "__snippet__"}
parser = doctest.DocTestParser()


def run_doctest(code, name):
    # Every line must belong to an example (a prompt, its continuation or its output): text after a
    # blank line would be prose to doctest, shown as code but never run.
    stray = [p for p in parser.parse(code, name) if isinstance(p, str) and p.strip()]
    if stray:
        return {"ok": False, "report": "lines outside any >>> example (they would not run): " + repr(stray[0][:80])}
    if "doctest:" in code:
        return {"ok": False, "report": "doctest directives (+SKIP ...) are not taken: every example runs as shown"}
    test = parser.get_doctest(code, ns, name, name, 0)
    out = io.StringIO()
    r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    r.run(test, out=out.write, clear_globs=False)
    ns.update(test.globs)
    return {"ok": r.failures == 0, "report": out.getvalue()}


def run_plain(code, name):
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            exec(compile(code, name, "exec"), ns)
    except BaseException:
        return {"ok": False, "report": buf.getvalue() + traceback.format_exc()}
    if buf.getvalue():  # printed, but the page cannot show it: write the block with >>> prompts
        return {"ok": False, "report": "the block prints, but its output is not shown (use >>> prompts): "
                + repr(buf.getvalue()[:200])}
    return {"ok": True, "report": ""}


for line in sys.stdin:
    req = json.loads(line)
    has_prompt = any(l.lstrip().startswith(">>>") for l in req["code"].splitlines())
    res = (run_doctest if has_prompt else run_plain)(req["code"], req["name"])
    sys.__stdout__.write(json.dumps(res) + "\n")
    sys.__stdout__.flush()
'''


class PageRun:
    """Runs one page's snippets in order, in a fresh folder."""

    def __init__(self, app, docname):
        self.app, self.docname = app, docname
        self.build = os.environ.get("ZARRPP_BUILD_DIR", "")
        self.src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # docs/
        self.src = os.path.dirname(self.src)
        self.dir = tempfile.mkdtemp(prefix="zarrpp-snippets-")
        path = f"{self.build}:/usr/bin:/bin"  # Debian's python3 (NumPy) first, as a user's shell has it
        pythonpath = os.environ.get("ZARRPP_SNIPPET_PYTHONPATH", os.path.join(self.build, "python"))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ZARRPP_")}
        self.env.update(PATH=path, PYTHONPATH=pythonpath, HOME=self.dir,
                        LC_ALL="C.UTF-8", COLUMNS="100")
        self.py = None

    def fail(self, block, what):
        logger.warning(f"snippet ({block.lang}) failed: {what}", location=(self.docname, block.line))

    def run(self, blocks):
        try:
            for n, b in enumerate(blocks):
                if b.not_run:
                    self.app.env.zarrpp_not_run.append((self.docname, b.line, b.lang, b.not_run))
                    continue
                if b.lang == "output-orphan":
                    self.fail(b, "an ```output block must come right after the sh or cpp block it shows the output "
                              "of (Python shows output after >>> prompts, console after each command)")
                elif b.lang not in RUN and b.lang not in DATA:
                    runs = ", ".join(sorted(RUN))
                    self.fail(b, f"a ```{b.lang} block is not run here: write it as one that runs ({runs}) "
                              "or mark it <!-- not-run: why -->")
                elif b.lang in RUN:
                    getattr(self, "run_" + b.lang.replace("bash", "sh"))(b, n)
                    self.app.env.zarrpp_ran += 1
        finally:
            if self.py:
                self.py.stdin.close()
                self.py.wait(timeout=30)
            shutil.rmtree(self.dir, ignore_errors=True)

    def shell(self, cmd):
        return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", cmd], cwd=self.dir, env=self.env, timeout=TIMEOUT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def run_console(self, b, _):
        try:
            cmds = console_commands(b.code)
        except ValueError as e:
            return self.fail(b, str(e))
        for cmd, want in cmds:
            r = self.shell(cmd)
            # A command may fail only where the page shows it failing (an error line in its output).
            if r.returncode != 0 and not re.search(r"^(zarrpp: error:|Traceback|error:)", want, re.M):
                return self.fail(b, f"`{cmd}` exited with {r.returncode}:\n{r.stdout}")
            if not output_matches(want, r.stdout):
                return self.fail(b, f"`{cmd}` printed:\n{r.stdout}\nthe page shows:\n{want}")

    def run_sh(self, b, _):
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", b.code], cwd=self.dir, env=self.env, timeout=TIMEOUT,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            return self.fail(b, f"exited with {r.returncode}:\n{r.stdout}")
        if b.output is not None and not output_matches(b.output.code, r.stdout):
            self.fail(b, f"printed:\n{r.stdout}\nthe page shows:\n{b.output.code}")

    def run_cpp(self, b, n):
        src = os.path.join(self.dir, f"snippet{n}.cpp")
        exe = os.path.join(self.dir, f"snippet{n}")
        with open(src, "w", encoding="utf-8") as f:
            f.write(b.code)
        cc = ["g++", "-std=c++20", "-O1", "-I", os.path.join(self.src, "include"), "-I",
              os.path.join(self.build, "include"), src, "-o", exe, "-L", self.build, "-lzarrpp",
              f"-Wl,-rpath,{self.build}", "-pthread"]
        r = subprocess.run(cc, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
        if r.returncode != 0:
            return self.fail(b, f"does not compile ({shlex.join(cc)}):\n{r.stdout}")
        r = subprocess.run([exe], cwd=self.dir, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=TIMEOUT)
        if r.returncode != 0:
            return self.fail(b, f"exited with {r.returncode}:\n{r.stdout}")
        if b.output is not None and not output_matches(b.output.code, r.stdout):
            self.fail(b, f"printed:\n{r.stdout}\nthe page shows:\n{b.output.code}")

    def run_python(self, b, _):
        if self.py is None:
            self.py = subprocess.Popen(["/usr/bin/python3", "-c", PY_DRIVER], cwd=self.dir, env=self.env, text=True,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.py.stdin.write(json.dumps({"code": b.code, "name": f"{self.docname}:{b.line}"}) + "\n")
        self.py.stdin.flush()
        line = self.py.stdout.readline()
        if not line:
            self.py = None
            return self.fail(b, "the Python process ended")
        res = json.loads(line)
        if not res["ok"]:
            self.fail(b, res["report"])


def on_builder_inited(app):
    if not os.environ.get("ZARRPP_BUILD_DIR"):
        raise ExtensionError("ZARRPP_BUILD_DIR is not set: build the site with scripts/build_docs.sh BUILD_DIR")
    app.env.zarrpp_not_run = []
    app.env.zarrpp_ran = 0


INCLUDE = re.compile(r"^[ \t]*(?:```|:::)\{include\} (\S+)\s*$", re.M)


def on_source_read(app, docname, source):
    text = source[0]
    blocks = parse_blocks(text)
    # A page that includes a file (the changelog) shows that file's blocks too: they run as well.
    here = os.path.dirname(app.env.doc2path(docname))
    for m in INCLUDE.finditer(text):
        with open(os.path.join(here, m.group(1)), encoding="utf-8") as f:
            included = parse_blocks(f.read())
        for b in included:  # an included file cannot show the marker: its blocks must run
            b.not_run = None
        blocks += included
    PageRun(app, docname).run(blocks)
    # The marker becomes visible on the page (indented as it is, inside a list item too).
    source[0] = NOT_RUN_LINE.sub(lambda m: f"{m.group(1)}*Shown, not run: {m.group(2)}.*\n", text)


DOCSTRING_CHECK = r'''
import doctest, importlib, inspect, re, sys
literal = re.compile(r"(::[ \t]*\n[ \t]*\n[ \t]+\S)|(^\s*\.\. (code-block|code|sourcecode|literalinclude)::)", re.M)
finder = doctest.DocTestFinder(recurse=False)
failed = 0
for name in sys.argv[1:]:
    mod = importlib.import_module(name)
    ours = [getattr(mod, n) for n in getattr(mod, "__all__", dir(mod)) if not n.startswith("_")]
    home = [getattr(o, "__module__", None) or getattr(o, "__name__", "") for o in ours]
    objs = [mod] + [o for o, h in zip(ours, home) if isinstance(h, str) and h.startswith("zarrpp")]
    for o in list(objs):
        if inspect.isclass(o):
            objs += [v for k, v in vars(o).items() if not k.startswith("_")]
    for o in objs:
        if isinstance(o, (classmethod, staticmethod)):
            o = o.__func__
        if not (inspect.ismodule(o) or callable(o) or isinstance(o, property)):
            continue  # data: its docstring is its type's
        # Every public object's examples, wherever it is defined (testmod would find only the
        # module's own): as the reference shows them.
        target = o.fget if isinstance(o, property) else o
        doc = getattr(target, "__doc__", None) or ""
        if not isinstance(doc, str):
            continue
        if literal.search(doc):
            print(f"{name}: {getattr(target, '__qualname__', target)}'s docstring shows code in a literal block: "
                  "write it as a doctest (>>>), which runs")
            failed += 1
        if ">>>" not in doc:
            continue
        if "doctest:" in doc:
            print(f"{name}: {getattr(target, '__qualname__', target)}: doctest directives are not taken")
            failed += 1
        label = f"{name}.{getattr(target, '__qualname__', '?')}"
        for test in finder.find(target, label, globs={}, module=False) if callable(target) or inspect.ismodule(target) \
                else [doctest.DocTestParser().get_doctest(doc, {}, label, None, 0)]:
            r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
            r.run(test)
            failed += r.failures
sys.exit(1 if failed else 0)
'''


def check_docstrings(app):
    """The Python reference shows the package's docstrings: their examples must be doctests, and run."""
    run = PageRun(app, "reference/python")
    try:
        r = subprocess.run(["/usr/bin/python3", "-c", DOCSTRING_CHECK] + DOCTEST_MODULES, cwd=run.dir, env=run.env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
    finally:
        shutil.rmtree(run.dir, ignore_errors=True)
    if r.returncode != 0:
        logger.warning(f"docstring examples of the Python package failed:\n{r.stdout}", location="reference/python")


def on_build_finished(app, exc):
    if exc is not None or not hasattr(app.env, "zarrpp_not_run"):
        return
    check_docstrings(app)
    logger.info(f"snippets: {app.env.zarrpp_ran} ran; {len(app.env.zarrpp_not_run)} shown, not run:")
    for doc, line, lang, why in app.env.zarrpp_not_run:
        logger.info(f"  {doc}.md:{line} ({lang}): {why}")


def setup(app):
    app.connect("builder-inited", on_builder_inited)
    app.connect("source-read", on_source_read)
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": False, "env_version": 1}
