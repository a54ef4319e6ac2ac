"""The OpenAI wire hash, versioned: ``v2:`` hashes each image's digest (not its base64 again);
a session recorded with the unprefixed v1 hash still checks under ``sessions prompt``."""

from __future__ import annotations

import hashlib
import io
import json

from PIL import Image

from artemis_cli.models.base import Message, ModelRequest, Part, ToolDecl
from artemis_cli.models.openai_wire import (
    WireOptions,
    image_url_digest,
    render_body,
    wire_hash,
    wire_hash_as,
    wire_hash_v1,
)

TAP = ToolDecl("tap", "Tap.", {"type": "object", "properties": {"index": {"type": "integer"}}})


def png(shade: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (30, 60), (shade, 5, 5)).save(out, format="PNG")
    return out.getvalue()


def request(*shades: int) -> ModelRequest:
    return ModelRequest(system="sys", tools=[TAP], role="operator", messages=[
        Message("user", [Part(text="look"), *[Part(image_png=png(s)) for s in shades]])])


def test_v2_hashes_the_image_digest_and_changes_with_the_image() -> None:
    body = render_body(request(10, 20), "m", WireOptions())
    digest = wire_hash(body)
    assert digest.startswith("v2:") and len(digest) == 3 + 64
    assert wire_hash(render_body(request(10, 20), "other-model", WireOptions())) == digest
    assert wire_hash(render_body(request(10, 21), "m", WireOptions())) != digest  # one image changed
    assert wire_hash(render_body(request(20, 10), "m", WireOptions())) != digest  # the order changed
    # the digest is the image's own sha256, also for a URL this process never rendered
    url = body["messages"][1]["content"][1]["image_url"]["url"]
    assert image_url_digest(url) == "sha256:" + hashlib.sha256(png(10)).hexdigest()
    foreign = json.loads(json.dumps(body))  # new str objects: not in the URL cache
    assert wire_hash(foreign) == digest


def test_an_old_v1_hash_is_checked_as_v1() -> None:
    body = render_body(request(10), "m", WireOptions())
    old = hashlib.sha256(json.dumps({"messages": body["messages"], "tools": body["tools"]}, ensure_ascii=False,
                                    separators=(",", ":"), sort_keys=True).encode()).hexdigest()
    assert wire_hash_v1(body) == old  # the hash sessions recorded before v2 hold
    assert wire_hash_as(body, old) == old
    assert wire_hash_as(body, wire_hash(body)) == wire_hash(body)
    assert wire_hash_as(render_body(request(11), "m", WireOptions()), old) != old
