"""The Gemini request body with each part converted once (SDK §8 request building, per call).

google-genai converts a request on every call: it validates every ``Content`` and ``Part`` again
(pydantic), maps them to the REST shape, base64-encodes every image and walks the whole dict
once more. A long transcript re-sends the same parts call after call (the naive baseline every
screenshot of the session), so that work grows with the session: about 3 ms per re-sent
screenshot, most of a naive bench run.

:class:`RestSender` sends the same body through the same client with the per-part work done
once: each of our parts is converted by the SDK itself (its own ``_Part_to_mldev`` and base64
encoding, on a one-part request) the first time it is sent, and kept while the requests keep
sending it (the cache holds exactly the parts of the last request, so it never outgrows one
request). Everything but the contents — model path, system instruction, tools, generation config —
is converted by the SDK on every call, and the body goes out through the SDK's own API client
(its headers, key, timeout and retry options); the reply is parsed as ``generate_content``
parses it. ``tests/models/test_gemini_rest.py`` pins the bytes: the fake server must receive the
same body from this path as from ``generate_content``.

It uses SDK internals (``google.genai.models._GenerateContentParameters_to_mldev`` and friends);
when they are missing (another SDK version), :func:`rest_sender` returns None and
``GeminiModel`` calls ``generate_content`` as before. A reply asking for a continuation (the
SDK's automatic continuation) is answered by sending the request again through
``generate_content``, which follows it.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from artemis_cli.models.base import Message, Part

try:  # SDK internals: checked once; without them GeminiModel uses generate_content
    from google.genai import _common, _extra_utils, types
    from google.genai import models as _sdk_models

    _TO_MLDEV = _sdk_models._GenerateContentParameters_to_mldev
    _FROM_MLDEV = _sdk_models._GenerateContentResponse_from_mldev
    _PARAMS = types._GenerateContentParameters
    _FROM_RESPONSE = types.GenerateContentResponse._from_response
    _CONVERT = _common.convert_to_dict
    _ENCODE = _common.encode_unserializable_types
    _CONTINUES = _extra_utils.should_continue_generation
    AVAILABLE = True
except (ImportError, AttributeError):  # pragma: no cover - another SDK version
    AVAILABLE = False

#: The contents stand-in while the SDK converts the rest of the request (replaced before sending).
_STAND_IN: Any = [{"role": "user", "parts": [{"text": "."}]}]


class NeedsSdkPath(Exception):
    """The reply needs what only ``generate_content`` does (a continuation): send it that way."""


def _part_key(part: Part, signature: bytes | None) -> tuple[Any, ...] | None:
    """What one converted part depends on; None when it cannot be a key (arguments that are
    not JSON: converted every time, as before)."""
    fc, fr = part.function_call, part.function_response
    try:
        call = (fc.name, fc.id, json.dumps(fc.args, sort_keys=True)) if fc is not None else None
        answer = (fr.name, fr.id, json.dumps(fr.response, sort_keys=True)) if fr is not None else None
    except (TypeError, ValueError):
        return None
    return part.text, part.image_png, call, answer, part.thought, signature


class RestSender:
    """Builds and sends one generateContent request per call (see the module doc)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._parts: dict[tuple[Any, ...], list[dict[str, Any]]] = {}

    @property
    def _api(self) -> Any:
        return self._client.models._api_client

    def _convert(self, sdk_parts: list[Any], model: str) -> list[dict[str, Any]]:
        """The SDK's own REST form of ``sdk_parts`` (one request holding just them)."""
        params = _PARAMS(model=model, contents=[types.Content(role="user", parts=sdk_parts)])
        converted: Any = _ENCODE(_CONVERT(_TO_MLDEV(self._api, params, None, params)))
        return list(converted["contents"][0]["parts"])

    def contents(self, messages: list[Message], model: str) -> list[dict[str, Any]]:
        """``messages`` in the REST shape for ``model``, each part converted once while the
        requests keep it (the parts of this request replace the cache)."""
        from artemis_cli.models.gemini import signature_for, to_sdk_parts

        kept: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        out: list[dict[str, Any]] = []
        for message in messages:
            parts: list[dict[str, Any]] = []
            for part in message.parts:
                key = _part_key(part, signature_for(part, model))
                rest = None if key is None else kept.get(key) or self._parts.get(key)
                if rest is None:
                    rest = self._convert(to_sdk_parts(part, model), model)
                if key is not None:
                    kept[key] = rest
                parts.extend(rest)
            out.append({"parts": parts, "role": message.role})
        self._parts = kept
        return out

    def send(self, model: str, contents: list[dict[str, Any]], config: Any) -> Any:
        """POST generateContent with ``contents`` (from :meth:`contents`) and the SDK's
        conversion of ``config``; the reply as ``generate_content`` returns it. Raises
        :class:`NeedsSdkPath` for a reply that asks for a continuation."""
        api = self._api
        params = _PARAMS(model=model, contents=_STAND_IN, config=config)
        body = _TO_MLDEV(api, params, None, params)
        url = body.get("_url")
        path = "{model}:generateContent".format_map(url) if url else "{model}:generateContent"
        query = body.get("_query")
        if query:
            path = f"{path}?{urlencode(query)}"
        body.pop("config", None)
        http_options = params.config.http_options if params.config is not None else None
        body = _ENCODE(_CONVERT(body))
        body["contents"] = contents
        response = api.request("post", path, body, http_options)
        answer = _FROM_MLDEV({} if not response.body else json.loads(response.body), None, params)
        config_of = params.config
        result = _FROM_RESPONSE(response=answer, kwargs={"config": {
            "response_schema": getattr(config_of, "response_schema", None),
            "response_json_schema": getattr(config_of, "response_json_schema", None),
            "include_all_fields": getattr(config_of, "include_all_fields", None),
        }} if config_of is not None else {})
        result.sdk_http_response = types.HttpResponse(headers=response.headers)
        api._verify_response(result)
        if _CONTINUES(result):
            raise NeedsSdkPath("the reply asks for a continuation")
        return result


def rest_sender(client: Any) -> RestSender | None:
    """A :class:`RestSender` for ``client`` (a Gemini API client), or None when the SDK's
    internals it uses are not there (or the client is a Vertex one)."""
    if not AVAILABLE or getattr(getattr(getattr(client, "models", None), "_api_client", None), "vertexai", True):
        return None
    return RestSender(client)
