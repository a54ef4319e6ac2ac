"""A model double that decides only from the rendered request it receives (issue 34 item 1).

The scripted model plays a task's reference, so it cannot show that a task is solvable from what a
model is told. This double has no reference and no password: each turn it reads the request's
system text (the task's secrets, listed by name with their descriptions), the task text (the
goal) and the element list of the current observation, and logs in to an app the way a model
reading the same request would:

* the app is the one the goal names ("Log in to the Shop"): launched when another is in front;
* the username is the one the goal states ("... the demo account (username demo) ...");
* the password is the secret the system text lists whose description says it is a password; it
  is typed with ``type_text(secret=NAME)`` into the field whose element line is flagged
  ``password``;
* the username field is the editable element whose hint, text or id says "user";
* then it taps the button labelled "Log in" (or "Sign in");
* once no login field is on the screen and the app shows its content, it finishes.

It decides from the screen alone each turn (stateless, like the scripted model), and keeps every
request it was sent in ``requests`` so a test can search them.
"""

from __future__ import annotations

import re
import time
from typing import Any

from artemis_cli.models.base import FunctionCall, Message, ModelRequest, ModelResponse, Part, Usage
from artemis_cli.models.conversation import view_from_request
from artemis_cli.perception.elements import ParsedElement, parse_element_lines

SECRETS_HEADING = "Secrets you can type with type_text(secret=NAME)"
_SECRET_LINE = re.compile(r"^- ([A-Za-z_][A-Za-z0-9_]*): (.+)$")
_USERNAME = re.compile(r"\busername[:\s]+\"?([\w.@+-]+)", re.IGNORECASE)
LOGIN_LABELS = ("log in", "login", "sign in")


def told_secrets(system: str) -> dict[str, str]:
    """The secrets the system text lists (name -> description), read from its secrets block."""
    out: dict[str, str] = {}
    lines = system.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(SECRETS_HEADING):
            for item in lines[i + 1:]:
                m = _SECRET_LINE.match(item)
                if m:
                    out[m.group(1)] = m.group(2)
                elif out or not item.strip():
                    break
    return out


class RequestReadingLogin:
    """Model protocol; offline. See the module docstring."""

    offline = True
    name = "request-double"
    label = "request-reading login double (tests; reads only the request)"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def generate(self, request: ModelRequest) -> ModelResponse:
        t0 = time.perf_counter()
        self.requests.append(request)
        thought, call = self.decide(request)
        message = Message("model", [Part(text=thought), Part(function_call=call)])
        return ModelResponse(message, Usage(), self.name, (time.perf_counter() - t0) * 1000)

    def decide(self, request: ModelRequest) -> tuple[str, FunctionCall]:
        view = view_from_request(request)
        elements = parse_element_lines(view.observation_text)
        fields = [e for e in elements if "edit" in e.flags]
        password = next((e for e in fields if "password" in e.flags), None)
        user = next((e for e in fields if e is not password and _says_user(e)), None)
        login = next((e for e in elements if _norm(e.label) in LOGIN_LABELS and "click" in e.flags), None)
        if password is None and user is None:
            app = self.app(view.goal)
            foreground = re.search(r"Foreground app: (\S+?)\.? ", view.observation_text)
            if app and (foreground is None or app.casefold() not in foreground.group(1).casefold()):
                return f"Open the {app} app the goal names.", _call("launch_app", app=app, intent=f"opens {app}")
            if elements and login is None:
                return "No login form: the app shows its content.", FunctionCall(
                    "finish", {"success": True, "answer": "logged in"})
            return "Nothing to log in with yet.", FunctionCall("wait", {"seconds": 1, "intent": "let it load"})
        if user is not None and _norm(user.label) != _norm(self.username(view.goal)):
            return (f"Type the username the goal states into [{user.index}].",
                    _call("type_text", text=self.username(view.goal), index=user.index, clear=bool(user.label),
                          intent="fills in the username"))
        if password is not None and not user_typed_password(password):
            secret = self.password_secret(request.system)
            return (f"Type secret {secret} into the password field [{password.index}].",
                    _call("type_text", secret=secret, index=password.index, intent="fills in the password"))
        if login is None:
            return "No login button.", FunctionCall("finish", {"success": False, "answer": "no Log in button"})
        return f"Tap [{login.index}] to log in.", _call("tap", index=login.index, intent="logs in")

    @staticmethod
    def app(goal: str) -> str | None:
        """The app the goal names ("Log in to the Shop ..." -> "Shop")."""
        m = re.search(r"\b(?:to|in) the ([A-Z][\w-]*)", goal)
        return m.group(1) if m else None

    @staticmethod
    def username(goal: str) -> str:
        m = _USERNAME.search(goal)
        if m is None:
            raise AssertionError(f"the goal states no username: {goal!r}")
        return m.group(1).rstrip(").,;")

    @staticmethod
    def password_secret(system: str) -> str:
        told = told_secrets(system)
        name = next((n for n, d in told.items() if "password" in d.casefold()), None)
        if name is None:
            raise AssertionError(f"the system text names no password secret (told: {told})")
        return name


def user_typed_password(field: ParsedElement) -> bool:
    """A password field shows dots once something is typed (its hint otherwise)."""
    return bool(field.label) and set(field.label) <= {"•", "*", "●", "·"}


def _says_user(el: ParsedElement) -> bool:
    return any("user" in s.casefold() for s in (el.hint, el.label, el.short_id))


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _call(name: str, **args: Any) -> FunctionCall:
    return FunctionCall(name, args)
