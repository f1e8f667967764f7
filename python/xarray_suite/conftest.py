"""The zarrpp variants of xarray's own zarr backend tests (issue 70). xarray's installed test
module is imported, not copied: test_backends_zarrpp.py subclasses its TestZarrDirectoryStore three
times, and an autouse fixture routes what the unchanged test bodies call through zarrpp
(``Dataset.to_zarr`` to ``to_zarrpp`` when zarrpp writes; the ``zarr`` engine, which
``open_dataset`` and ``open_zarr`` reach, to zarrpp's engine always).

Every test whose outcome is known is marked in expected.py: left out (not applicable, with the
reason; also every test xarray marks xfail itself) or expected to fail (strict: a test that starts
passing fails the run until the list is updated). Each failure is classified at the end of the run
(see _classify)."""
from __future__ import annotations

import collections
from typing import Any, Dict, List

import pytest

import expected

_OUTCOMES: Dict[str, List[str]] = collections.defaultdict(list)


def pytest_collection_modifyitems(config: Any, items: List[Any]) -> None:
    for item in items:
        cls = item.cls.__name__ if item.cls else ""
        name = item.name
        why = expected.left_out(cls, name)
        if why is None and item.get_closest_marker("xfail") is not None:
            why = "marked xfail by xarray itself"
        if why:
            item.add_marker(pytest.mark.skip(reason=f"left out: {why}"))
            continue
        fails = expected.failing(cls, name)
        if fails:
            item.add_marker(pytest.mark.xfail(strict=True, reason=fails))


def _classify(report: Any, call: Any) -> str:
    """What a failure is: a silent difference (the test's own comparison of what was written with
    what was read back failed), a wrong or missing exception (pytest.raises / pytest.warns did not
    see what the test expects), or an error (an exception the test did not expect)."""
    exc = call.excinfo
    text = str(exc.value) if exc else ""
    if exc is None:
        return "passed"
    if exc.typename == "Failed" and ("DID NOT RAISE" in text or "DID NOT WARN" in text):
        return "wrong or missing exception"
    if exc.typename == "AssertionError" and "Regex pattern did not match" in text:
        return "wrong or missing exception"
    if exc.typename == "AssertionError":
        data = any(w in text for w in ("Differing values", "Differing data variables", "dtype", "shape",
                                       "Differing dimensions", "not identical\n\nDiffering values"))
        return "silent difference (data)" if data and "attributes" not in text else "silent difference (metadata)"
    return "error"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" and not (call.when == "setup" and report.failed):
        return
    if report.skipped and not hasattr(report, "wasxfail"):
        return  # left out, or skipped by the test itself
    kind = "passed" if report.passed and not hasattr(report, "wasxfail") else _classify(report, call)
    _OUTCOMES[item.cls.__name__].append(f"{kind}\t{item.name}")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    tr = terminalreporter
    tr.section("zarrpp variants of xarray's zarr backend tests")
    for cls, rows in sorted(_OUTCOMES.items()):
        counts = collections.Counter(r.split("\t")[0] for r in rows)
        tr.write_line(f"{cls}: {len(rows)} run; " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        for r in sorted(rows):
            if not r.startswith("passed"):
                tr.write_line(f"    {r}")
