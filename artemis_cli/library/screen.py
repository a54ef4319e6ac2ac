"""The Python API's view of a screen: a ``Screen`` made from an observation, and the selectors
plain steps find their target with (a task ``reference`` step's: text, id, desc, nth)."""

from __future__ import annotations

from typing import Any

from artemis_cli.errors import UsageError
from artemis_cli.library.results import Screen, ScreenElement
from artemis_cli.operators.observe import Observation


def selector_of(text: str | None, id: str | None, desc: str | None, nth: int) -> dict[str, Any]:
    sel: dict[str, Any] = {}
    if text is not None:
        sel["text"] = text
    if id is not None:
        sel["id"] = id
    if desc is not None:
        sel["desc"] = desc
    if not sel:
        raise UsageError("no target given", hint='name it: phone.tap("Save"), tap(id="save"), tap(desc="Navigate up") or tap(ai="…")')
    if nth:
        sel["nth"] = nth
    return sel


def selector_text(sel: dict[str, Any]) -> str:
    from artemis_cli.models.offline.scripted import selector_phrase

    return selector_phrase(sel)


def screen_of(obs: Observation) -> Screen:
    elements = []
    for e in obs.elements:
        n = e.node
        b = n.bounds
        elements.append(ScreenElement(
            index=e.index, label=e.label, class_name=n.class_name, resource_id=n.resource_id,
            content_desc=n.content_desc, bounds=(b.left, b.top, b.right, b.bottom), center=e.center,
            clickable=n.clickable, checked=n.checked if n.checkable else None, enabled=n.enabled, focused=n.focused))
    title = obs.modal.title if obs.modal is not None else None
    return Screen(app=obs.foreground, elements=elements, element_list=obs.element_list, png=obs.png, xml=obs.xml,
                  dialog=title or None)
