"""The snippet runner's own rules (ctest docs.snippet_rules): what counts as matching output, how
blocks and console commands are read, and that a wrong snippet fails."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import zarrpp_snippets as s  # noqa: E402


class FakeApp:
    """What PageRun uses of Sphinx's application: the environment's two counters."""

    def __init__(self):
        self.env = type("Env", (), {"zarrpp_not_run": [], "zarrpp_ran": 0})()


@pytest.fixture
def page_run(tmp_path, monkeypatch):
    """A runner for one page, and the warnings it gives (message, location)."""
    warned = []
    monkeypatch.setenv("ZARRPP_BUILD_DIR", str(tmp_path))
    monkeypatch.setattr(s.logger, "warning", lambda msg, location=None: warned.append((msg, location)))
    app = FakeApp()
    return s.PageRun(app, "page"), app, warned


def test_output_must_match_line_by_line():
    assert s.output_matches("a\nb\n", "a\nb")
    assert s.output_matches("a  \n", "a\n\n")  # trailing spaces and blank lines do not count
    assert not s.output_matches("a\nb", "a\nc")
    assert not s.output_matches("a", "a\nb")
    assert not s.output_matches("", "something")


def test_ellipsis_matches_lines_or_text():
    assert s.output_matches("first\n...\nlast", "first\nx\ny\nlast")
    assert s.output_matches("first\n...\nlast", "first\nlast")
    assert s.output_matches("took ... s", "took 0.25 s")
    assert not s.output_matches("took ... s", "took 0.25 ms!")
    assert not s.output_matches("first\n...\nlast", "first\nx")


def test_console_commands_and_their_output():
    cmds = s.console_commands("$ echo a \\\n  b\na b\n$ true\n")
    assert cmds == [("echo a \n  b", "a b"), ("true", "")]


def test_blocks_output_and_marker():
    page = "text\n<!-- not-run: needs S3 -->\n```sh\naws s3 ls\n```\n\n```cpp\nint main() {}\n```\n```output\nhi\n```\n"
    blocks = s.parse_blocks(page)
    assert [(b.lang, b.not_run) for b in blocks] == [("sh", "needs S3"), ("cpp", None)]
    assert blocks[1].output.code == "hi\n"


def test_a_wrong_console_block_fails(page_run):
    run, app, warned = page_run
    run.run(s.parse_blocks("```console\n$ echo 1\n2\n```\n```console\n$ echo 3\n3\n```\n```js\nx\n```\n"))
    assert len(warned) == 2 and "printed" in warned[0][0] and "```js" in warned[1][0]
    assert app.env.zarrpp_ran == 2


def test_blocks_the_page_shows_are_all_found():
    page = ("- a list item:\n\n  ```python\n  x = 1\n  ```\n\n> ```cpp\n> int main() {}\n> ```\n\n"
            "    indented code\n\n``` python\ny = 2\n```\n\n```{code-block} sh\nls\n```\n\n```\nbare\n```\n")
    assert [b.lang for b in s.parse_blocks(page)] == ["python", "cpp", "indented", "python", "sh", ""]


def test_output_only_right_after_sh_or_cpp():
    page = "```python\nprint(2)\n```\n```output\n3\n```\n```sh\necho 1\n```\n\ntext\n\n```output\n1\n```\n"
    assert [b.lang for b in s.parse_blocks(page)] == ["python", "output-orphan", "sh", "output-orphan"]


def test_python_blocks_must_show_what_they_print(page_run):
    run, _, warned = page_run
    run.run(s.parse_blocks(
        "```python\nprint('hidden')\n```\n```python\n>>> 1 + 1\n2\n\nassert False\n```\n"
        "```python\n>>> 1 + 1\n2\n```\n"))
    assert len(warned) == 2 and "prints" in warned[0][0] and "outside any >>> example" in warned[1][0]
