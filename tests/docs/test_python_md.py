"""Every ```python example of docs/python.md runs as written (issue 37). Each block is marked by the
HTML comment on the line above it:

* ``<!-- run: sim -->``: executed on the simulated phone, no API key (a fresh data dir each);
* ``<!-- run: model -->``: executed with ``GEMINI_API_KEY`` set and ``$ARTEMIS_GEMINI_BASE_URL``
  pointing the real google-genai SDK at the fake Gemini server, whose policy plays the doc's
  operator script (``act``) and reads its answers to the screen asks (``tap(ai=)``, ``query``,
  ``check``) off the screen the request carries (:func:`_docs_model`) — so a doc that claims the
  wrong screen fails;
* ``<!-- run: pytest -->``: written to a test file and run by pytest with ``--artemis-device sim``;
* ``<!-- skip: REASON -->``: not run; REASON must be one of :data:`SKIPS`.

A ``print(...)`` line whose trailing ``# comment`` is its output must print that line (``…``
stands for any text), so the outputs the page shows stay true."""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply
from artemis_cli.models.offline.scripted import script_policy

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "python.md"

#: why a block is not run (the marker's text)
SKIPS = {"needs a phone attached over adb"}

_BLOCK = re.compile(r"^<!-- (run|skip): ([^>]*?) -->\n```python\n(.*?)^```", re.S | re.M)


def _blocks() -> list[tuple[str, str, str, int]]:
    """(kind, how, code, line) of every python block (kind: run or skip)."""
    text = DOC.read_text(encoding="utf-8")
    found = [(m.group(1), m.group(2).strip(), m.group(3), text.count("\n", 0, m.start()) + 2)
             for m in _BLOCK.finditer(text)]
    assert len(found) == text.count("```python\n"), "a ```python block of docs/python.md has no run/skip marker"
    return found


BLOCKS = _blocks()


def test_every_block_is_run_or_skipped_for_a_listed_reason() -> None:
    assert {how for kind, how, _, _ in BLOCKS if kind == "skip"} <= SKIPS
    kinds = [how for kind, how, _, _ in BLOCKS if kind == "run"]
    assert set(kinds) == {"sim", "model", "pytest"} and len(kinds) >= 7


def test_the_documented_signature_is_phone_opens() -> None:
    """The ``Phone.open(...)`` the page shows has the parameters, order and defaults of the code,
    and every parameter has its bullet."""
    from artemis_cli import Phone

    text = DOC.read_text(encoding="utf-8")
    shown = re.search(r"```text\n(Phone\.open\(.*?\))\n```", text, re.S)
    assert shown, "docs/python.md lost its Phone.open signature"
    params = list(inspect.signature(Phone.open).parameters.values())
    real = "Phone.open(" + ", ".join(
        ("*, " if p.kind is p.KEYWORD_ONLY and params[i - 1].kind is not p.KEYWORD_ONLY else "")
        + f"{p.name}={p.default!r}" for i, p in enumerate(params)) + ")"
    assert " ".join(shown.group(1).split()) == real
    bullets = [line for line in text.splitlines() if line.startswith("- `")]
    assert [p.name for p in params if not any(f"`{p.name}`" in line for line in bullets)] == []


# -- the fake model the "model" blocks talk to -----------------------------------------------

#: the operator's script for the page's one ``act`` goal (reference-step syntax)
ADD_SOFIA = [
    {"launch": "com.android.contacts"},
    {"tap": {"desc": "Create contact"}},
    {"type": {"text": "Sofia", "into": {"id": "first_name"}}},
    {"type": {"text": "Ortega", "into": {"id": "last_name"}}},
    {"tap": {"text": "Save"}},
    {"finish": {"success": True, "answer": "Sofia Ortega was added"}},
]


def _screen(text: str) -> list[dict[str, Any]]:
    """The fenced element lines of an ask's request: index, text, desc, id."""
    body = text.split("<screen>\n", 1)[1].split("\n</screen>", 1)[0]
    out = []
    for line in body.splitlines():
        m = re.match(r"^\[(\d+)\] (\S+)", line)
        if not m:
            continue
        label = re.search(r'^\[\d+\] \S+ "((?:[^"\\]|\\.)*)"', line)
        desc = re.search(r' desc="((?:[^"\\]|\\.)*)"', line)
        rid = re.search(r" id=(\S+)", line)
        out.append({"index": int(m.group(1)), "text": json.loads(f'"{label.group(1)}"') if label else "",
                    "desc": json.loads(f'"{desc.group(1)}"') if desc else "", "id": rid.group(1) if rid else ""})
    return out


def _asked(text: str) -> str:
    """The quoted question, statement or description at the top of an ask's request."""
    return str(json.loads(text.split("\n", 2)[1]))


def _title(els: list[dict[str, Any]]) -> str:
    return next((e["text"] for e in els if e["id"] == "large_title"), "")


#: what the page asks, answered from the screen in the request: (answer, reason)
QUERIES: dict[str, Callable[[list[dict[str, Any]]], tuple[Any, str]]] = {
    "How many contacts are listed on the screen?": lambda els: (
        sum(1 for e in els if e["id"] == "contact_row"), "counted the rows of the contact list"),
    "Whose contact is open, and what is the phone number?": lambda els: (
        {"name": _title(els), "phone": next((e["text"] for e in els if e["text"].startswith("+")), "")},
        "the title and the phone row"),
    "What is Kenji's birthday?": lambda els: (None, "the screen shows no birthday, only a phone number and an email"),
}
CHECKS: dict[str, Callable[[list[dict[str, Any]]], tuple[bool, str]]] = {
    "the contact shown is Sofia Ortega": lambda els: (
        _title(els) == "Sofia Ortega", f"the title reads {_title(els) or 'nothing'}"),
    "the contact open is Alice Anderson": lambda els: (
        _title(els) == "Alice Anderson", f"the open contact is {_title(els) or 'none'}"),
}
LOCATES = {"the arrow that goes back to the contact list": lambda e: "Navigate up" in (e["text"], e["desc"])}


def _docs_model() -> Callable[[Any], Any]:
    operator = script_policy(ADD_SOFIA)

    def policy(request: Any) -> Any:
        first = (request.system or "").split("\n", 1)[0]
        if first not in ("You are the Artemis screen reader.", "You are the Artemis screen checker.",
                         "You are the Artemis element finder."):
            return operator(request)
        text = request.contents[0]["parts"][0]["text"]
        asked, els = _asked(text), _screen(text)
        if first.endswith("reader."):
            answer, reason = QUERIES[asked](els)
            reply = {"answer": answer, "reason": reason}
        elif first.endswith("checker."):
            passed, reason = CHECKS[asked](els)
            reply = {"passed": passed, "reason": reason}
        else:
            hit = next((e["index"] for e in els if LOCATES[asked](e)), None)
            reply = {"index": hit, "reason": "the Navigate up arrow in the app bar"}
        return FakeReply(parts=[{"text": json.dumps(reply)}])

    return policy


# -- running the blocks ----------------------------------------------------------------------

def _expected_lines(code: str) -> list[re.Pattern[str]]:
    """A print line's trailing comment is the output line it must produce (… is any text)."""
    out = []
    for line in code.splitlines():
        m = re.match(r"^\s*print\(.*\)\s+#\s(.+)$", line)
        if m:
            parts = [re.escape(p.strip()) for p in m.group(1).strip().split("…")]
            out.append(re.compile("^" + ".*".join(parts) + "$"))
    return out


def _check_output(code: str, printed: str) -> None:
    lines = printed.splitlines()
    for want in _expected_lines(code):
        assert any(want.match(line) for line in lines), f"no printed line matches {want.pattern!r}:\n{printed}"


def _exec(code: str, line: int) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"docs/python.md:{line}", "exec"), {"__name__": "__docs__"})
    return out.getvalue()


@pytest.mark.parametrize(("how", "code", "line"), [(how, code, line) for kind, how, code, line in BLOCKS
                                                   if kind == "run"], ids=lambda v: str(v) if isinstance(v, int) else None)
def test_the_example_runs_as_written(how: str, code: str, line: int, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARTEMIS_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    if how == "sim":
        _check_output(code, _exec(code, line))
    elif how == "model":
        with FakeGeminiServer(_docs_model()) as server:
            monkeypatch.setenv("GEMINI_API_KEY", "fake-key-for-the-docs")
            monkeypatch.setenv("ARTEMIS_GEMINI_BASE_URL", server.base_url)
            _check_output(code, _exec(code, line))
            assert server.requests and not server.errors
    else:
        (tmp_path / "test_doc_example.py").write_text(code, encoding="utf-8")
        res = subprocess.run([sys.executable, "-m", "pytest", "test_doc_example.py", "--artemis-device", "sim",
                              "-p", "no:cacheprovider", "-q"], cwd=tmp_path, capture_output=True, text=True,
                             timeout=120)
        assert res.returncode == 0, res.stdout + res.stderr
        assert re.search(r"\b\d+ passed\b", res.stdout) and "skipped" not in res.stdout, res.stdout
