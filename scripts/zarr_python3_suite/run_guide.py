"""Runs the Python blocks of zarr-python's user guide pages with `zarr` resolving to zarrpp.

    python3 run_guide.py GUIDE_DIR PAGE ...

Each page's blocks run in order, in one namespace per page and a fresh working folder per page;
a block passes when it runs without an exception. Blocks that need the network (a URL of a
remote store, a remote object store client) and blocks zarr-python marks exec="false" (its own
docs build does not run them) are counted apart. Prints one line per failing block and the totals."""
import contextlib
import io
import json
import os
import re
import sys
import tempfile
import textwrap
import traceback
from pathlib import Path

# A python fence, also indented inside an admonition ("!!! warning"), which zarr-python's docs
# build (markdown-exec) runs as well; its body is dedented by the fence's indent.
FENCE = re.compile(r"^( *)```python([^\n]*)\n(.*?)^\1```", re.M | re.S)
# A remote URL, or an object store client for a remote service (obstore's S3Store, GCSStore, ...).
NETWORK = re.compile(r"\b(s3|gs|gcs|az|abfs|https?)://|\b(S3Store|GCSStore|AzureStore|HTTPStore)\(")


def run_page(path: Path) -> list[dict]:
    blocks = [(options, textwrap.dedent(source) if indent else source)
              for indent, options, source in FENCE.findall(path.read_text())]
    namespace: dict = {"__name__": "__main__"}
    results = []
    with tempfile.TemporaryDirectory() as work:
        old = os.getcwd()
        os.chdir(work)
        try:
            for number, (options, source) in enumerate(blocks, 1):
                if 'exec="false"' in options:
                    # zarr-python's own docs build does not run it either (it says why).
                    results.append({"page": path.stem, "block": number, "network": False, "ok": None})
                    continue
                results.append(run_block(path.stem, number, source, namespace))
        finally:
            os.chdir(old)
    return results


def run_block(page: str, number: int, source: str, namespace: dict) -> dict:
    entry = {"page": page, "block": number, "network": bool(NETWORK.search(source))}
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, f"{page}.md block {number}", "exec"), namespace)
        entry["ok"] = True
    except BaseException as e:  # noqa: B902 - every failure is a result
        entry["ok"] = False
        entry["error"] = f"{type(e).__name__}: {e}"[:200]
        entry["where"] = traceback.format_exc().strip().splitlines()[-3:-1]
    return entry


def main() -> int:
    guide = Path(sys.argv[1])
    results = []
    for page in sys.argv[2:]:
        results += run_page(guide / f"{page}.md")
    counted = [r for r in results if r["ok"] is not None and not (r["network"] and not r["ok"])]
    passed = sum(r["ok"] for r in counted)
    for r in counted:
        if not r["ok"]:
            print(f"  {r['page']} block {r['block']}: {r['error']}")
    print(f"user guide: {passed}/{len(counted)} blocks run unchanged ({100.0 * passed / max(1, len(counted)):.1f}%); "
          f"not counted: {sum(r['ok'] is None for r in results)} blocks zarr-python's docs build does not run "
          f"(exec=\"false\") and {sum(bool(r['network'] and r['ok'] is False) for r in results)} failing blocks "
          "that need the network")
    out = os.environ.get("ZP3_RESULTS")
    if out:
        Path(out).with_name("guide.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
