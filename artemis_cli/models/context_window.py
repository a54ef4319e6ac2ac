"""Read an OpenAI-compatible server's context window, when it says (once per run, short timeouts,
never fatal):

* vLLM: ``GET /v1/models``, the served model's entry carries ``max_model_len``;
* llama.cpp's ``llama-server``: ``GET /props`` (beside ``/v1``), ``default_generation_settings.n_ctx``
  (older builds: a top-level ``n_ctx``) — the context of one slot, which is what a request gets;
* Ollama: ``POST /api/show {"model": NAME}``: the ``num_ctx`` line of ``parameters`` when the
  model sets one; otherwise Ollama serves its default context (:data:`OLLAMA_DEFAULT_NUM_CTX`,
  or less when the model was trained on less: ``model_info`` ``<arch>.context_length``) and
  silently truncates a longer prompt.

Gemini and OpenAI proper do not say (api.openai.com is not asked beyond ``/models``); then the
profile's budget stands. :func:`read_window` returns ``(tokens, where it was read)`` or None.

The same servers count tokens with the model's own tokenizer (:func:`count_prompt`, asked for
the S zone of the budget's floor): vLLM's ``POST /tokenize`` (``{"model", "messages", "tools"}``
→ ``{"count", …}``: the chat template applied, tools included) and llama.cpp's ``POST /tokenize``
(``{"content"}`` → ``{"tokens": [...]}``: the text's tokens, the template's few not counted).
Ollama has no such endpoint. A server without it (a 404), a bad answer or no answer is None:
the caller estimates instead.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

#: Seconds each request may take: a run waits for it.
WINDOW_TIMEOUT_S = 3.0
#: An answer larger than this is not a window.
MAX_ANSWER_BYTES = 4 << 20
#: Ollama's context when neither the model nor the server sets num_ctx (OLLAMA_CONTEXT_LENGTH).
OLLAMA_DEFAULT_NUM_CTX = 4096

_NUM_CTX_RE = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


def _positive(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 0 < value < 1 << 31:
        return value
    if isinstance(value, str) and value.strip().isdigit():
        n = int(value.strip())
        return n if 0 < n < 1 << 31 else None
    return None


def _root(base_url: str) -> str:
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def read_window(base_url: str | None, model: str, api_key: str = "", *,
                timeout_s: float = WINDOW_TIMEOUT_S) -> tuple[int, str] | None:
    """The context window ``base_url`` serves ``model`` with, and where it was read; None when the
    server does not say (or cannot be asked)."""
    if not base_url or urlsplit(base_url).scheme not in ("http", "https"):
        return None
    client = _Client(timeout_s, {"Authorization": f"Bearer {api_key or 'not-needed'}"})
    try:
        return _read(client, base_url.rstrip("/"), model)
    except Exception:  # a window we cannot read is a window the server does not say
        return None


class _Client:
    """One short request at a time (stdlib HTTP; no redirects followed, answers capped at 4 MiB)."""

    def __init__(self, timeout_s: float, headers: dict[str, str]) -> None:
        self.timeout_s, self.headers = timeout_s, headers

    def json(self, method: str, url: str, body: Any = None) -> Any:
        import json
        import urllib.request

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: Any, **kwargs: Any) -> None:
                return None

        data = json.dumps(body).encode("utf-8") if body is not None else None
        headers = {**self.headers, **({"Content-Type": "application/json"} if data is not None else {})}
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.build_opener(NoRedirect).open(request, timeout=self.timeout_s) as response:
                if response.status != 200:
                    return None
                raw = response.read(MAX_ANSWER_BYTES + 1)
        except Exception:
            return None
        if len(raw) > MAX_ANSWER_BYTES:
            return None
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError:
            return None


def _read(client: _Client, base: str, model: str) -> tuple[int, str] | None:
    listing = client.json("GET", base + "/models")
    entries = listing.get("data") if isinstance(listing, dict) else None
    entries = [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    entry = next((e for e in entries if e.get("id") == model), entries[0] if len(entries) == 1 else None)
    if entry is not None:
        n = _positive(entry.get("max_model_len"))
        if n is not None:
            return n, "vLLM GET /v1/models max_model_len"
    if urlsplit(base).hostname in ("api.openai.com",):
        return None
    root = _root(base)
    owner = str(entry.get("owned_by", "")) if entry is not None else ""
    readers = [_llamacpp, _ollama] if owner == "llamacpp" else [_ollama, _llamacpp]
    for reader in readers:
        found = reader(client, root, model)
        if found is not None:
            return found
    return None


def _llamacpp(client: _Client, root: str, model: str) -> tuple[int, str] | None:
    props = client.json("GET", root + "/props")
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    n = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
    if n is None:
        n = _positive(props.get("n_ctx"))
    return (n, "llama.cpp GET /props n_ctx") if n is not None else None


def _ollama(client: _Client, root: str, model: str) -> tuple[int, str] | None:
    show = client.json("POST", root + "/api/show", {"model": model})
    if not isinstance(show, dict):
        return None
    params = show.get("parameters")
    if isinstance(params, str):
        m = _NUM_CTX_RE.search(params)
        if m and _positive(m.group(1)):
            return int(m.group(1)), "Ollama /api/show num_ctx"
    info = show.get("model_info")
    trained = None
    if isinstance(info, dict):
        trained = next((_positive(v) for k, v in info.items() if str(k).endswith(".context_length")
                        and _positive(v) is not None), None)
    if trained is None and "model_info" not in show and "parameters" not in show:
        return None  # not Ollama's answer
    if trained is not None and trained < OLLAMA_DEFAULT_NUM_CTX:
        return trained, "Ollama /api/show context_length"
    return OLLAMA_DEFAULT_NUM_CTX, "Ollama's default num_ctx (the model sets none)"


def count_prompt(base_url: str | None, model: str, api_key: str, window_source: str, system: str,
                 tools: list[dict[str, Any]], *, timeout_s: float = WINDOW_TIMEOUT_S) -> tuple[int, str] | None:
    """``system`` and ``tools`` (OpenAI's function declarations) in the server's own tokens and
    how they were counted, for the server ``window_source`` says it is (:func:`read_window`'s
    answer: vLLM or llama.cpp have a tokenizer endpoint); None when it cannot say."""
    if not base_url or urlsplit(base_url).scheme not in ("http", "https"):
        return None
    client = _Client(timeout_s, {"Authorization": f"Bearer {api_key or 'not-needed'}"})
    url = _root(base_url.rstrip("/")) + "/tokenize"
    try:
        if window_source.startswith("vLLM"):
            body: dict[str, Any] = {"model": model, "messages": [{"role": "system", "content": system}]}
            if tools:
                body["tools"] = tools
            answer = client.json("POST", url, body)
            n = _positive(answer.get("count")) if isinstance(answer, dict) else None
            return (n, "vLLM POST /tokenize") if n is not None else None
        if window_source.startswith("llama.cpp"):
            import json

            text = system + ("\n" + json.dumps(tools, ensure_ascii=False, separators=(",", ":")) if tools else "")
            answer = client.json("POST", url, {"content": text})
            tokens = answer.get("tokens") if isinstance(answer, dict) else None
            n = len(tokens) if isinstance(tokens, list) and tokens else None
            return (n, "llama.cpp POST /tokenize") if n is not None else None
    except Exception:  # a count we cannot get is an estimate, never a failed run
        return None
    return None
