"""The pytest plugin (``pytest11`` entry point ``artemis``): a ``phone`` fixture for tests that
drive a phone with :class:`artemis_cli.api.Phone`.

* one session per test, named after the test's node id; the node id is also the test's cache key,
  so a test's first passing run is its baseline and later runs replay its AI steps
  (``--artemis-update`` records them again);
* the session is closed with the test's outcome: failed when setup or the test body failed,
  interrupted when the run stopped (Ctrl-C) or the test was skipped, else succeeded;
* a failed test gets the session's HTML report written, and an ``artemis`` section under its
  failure naming the session and the report; every test with a session carries ``session_id``,
  ``device``, ``steps``, ``model_calls``, ``cost_usd``, ``healed_steps`` and ``replayed_steps``
  (and ``report`` when it failed) as ``record_property`` properties, so ``--junitxml`` has them;
* with pytest-xdist, ``--artemis-devices 'sim*2'`` (or ``SERIAL,SERIAL``) gives each worker its own
  device: gw0 the first, gw1 the second, …

pytest loads this module in every run where the package is installed (this repository's own
suite too), so it imports nothing of Artemis at module level: the work is in the hooks and the
fixture, which import what they need when a test asks for ``phone``.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from artemis_cli.api import Phone

#: (option name, ini name, help): each has a command-line flag and an ini setting of the same name
_VALUE_OPTIONS: tuple[tuple[str, str], ...] = (
    ("device", "the device every test's phone runs on: sim, sim:<world>, or an adb serial "
               "(default: as `artemis run`: $ANDROID_SERIAL, the one attached phone, else sim)"),
    ("devices", "one device per xdist worker: 'sim*N' or SERIAL,SERIAL (gw0 takes the first, gw1 the second, …)"),
    ("model", "the model of AI steps (gemini…, openai:NAME, heuristic); default: the profile's, with an API key"),
    ("profile", "the profile (name or YAML path) the phone's sessions run under"),
    ("data-dir", "where sessions, baselines and reports are kept (default: $ARTEMIS_HOME, else the user data dir)"),
)


@dataclass(frozen=True)
class Settings:
    """What every test's ``phone`` is opened with (this process's device already chosen)."""

    device: str | None
    model: str | None
    profile: str | None
    data_dir: str | None
    update: bool


_SETTINGS = pytest.StashKey[Settings]()
#: the test's phase reports so far ("setup", "call"), for the outcome its session is closed with
_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()
_HELD = pytest.StashKey["_Held"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("artemis", "Artemis: the `phone` fixture (artemis_cli.api.Phone)")
    for name, text in _VALUE_OPTIONS:
        dest = f"artemis_{name.replace('-', '_')}"
        group.addoption(f"--artemis-{name}", dest=dest, default=None, metavar="VALUE", help=text)
        parser.addini(dest, f"{text} (--artemis-{name} wins)", default=None)
    group.addoption("--artemis-update", dest="artemis_update", action="store_true", default=False,
                    help="record every test's AI steps again (new baselines) instead of replaying them")
    parser.addini("artemis_update", "record AI steps again, as --artemis-update", type="bool", default=False)


def _value(config: pytest.Config, dest: str) -> Any:
    given = config.getoption(dest)
    return given if given not in (None, "", False) else (config.getini(dest) or None)


def _worker(config: pytest.Config) -> tuple[int, int] | None:
    """(this xdist worker's index, the number of workers); None outside a worker."""
    info = getattr(config, "workerinput", None)
    if not info:
        return None
    worker_id = str(info.get("workerid", "gw0"))
    index = int(worker_id[2:]) if worker_id[2:].isdigit() else 0
    return index, int(info.get("workercount", index + 1))


def _planned_workers(config: pytest.Config) -> int:
    """How many xdist workers this (controller) run starts: 0 without xdist."""
    if getattr(config.option, "dist", "no") == "no":
        return 0
    return len(getattr(config.option, "tx", None) or [])


def _device_slots(value: str) -> list[str]:
    from artemis_cli.bench.parallel import parse_devices
    from artemis_cli.errors import UsageError

    try:
        return [slot.spec for slot in parse_devices(value)]
    except UsageError as e:
        raise pytest.UsageError(f"--artemis-devices: {e}" + (f" ({e.hint})" if e.hint else "")) from None


def _choose_device(config: pytest.Config) -> str | None:
    """The device this process's tests run on; pytest.UsageError for a contradiction."""
    device, devices = _value(config, "artemis_device"), _value(config, "artemis_devices")
    if device and devices:
        raise pytest.UsageError("give --artemis-device or --artemis-devices, not both "
                                "(--artemis-devices gives each xdist worker its own device)")
    if not devices:
        return str(device) if device else None
    slots = _device_slots(str(devices))
    worker = _worker(config)
    workers = worker[1] if worker else _planned_workers(config)
    if workers > len(slots):
        raise pytest.UsageError(
            f"{workers} xdist workers but {len(slots)} device{'s' if len(slots) != 1 else ''} in "
            f"--artemis-devices {devices}: each worker needs its own device "
            f"(use -n {len(slots)}, or list more devices)")
    return slots[worker[0] if worker else 0]


def pytest_configure(config: pytest.Config) -> None:
    if not any(_value(config, dest) for dest in ("artemis_device", "artemis_devices", "artemis_model",
                                                  "artemis_profile", "artemis_data_dir")) \
            and not _value(config, "artemis_update"):
        config.stash[_SETTINGS] = Settings(None, None, None, None, False)
        return
    config.stash[_SETTINGS] = Settings(
        device=_choose_device(config), model=_value(config, "artemis_model"),
        profile=_value(config, "artemis_profile"), data_dir=_value(config, "artemis_data_dir"),
        update=bool(_value(config, "artemis_update")))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """Keep each phase's report on the item; when setup or the test failed and the test holds a
    phone, close its session as failed now, write its report and name both under the failure
    (the report is still open here, and with xdist this is the last moment before it is sent)."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    held = item.stash.get(_HELD, None)
    if held is not None and report.when in ("setup", "call") and report.failed:
        why = call.excinfo.exconly().strip().splitlines()[0][:500] if call.excinfo else "the test failed"
        lines = held.fail(why)
        if lines:
            report.sections.append(("artemis", "\n".join(lines)))


class _Held:
    """The phone a test holds, closed once: by the report hook when the test fails, else by the
    fixture's teardown with the test's outcome."""

    def __init__(self, phone: Phone, device: str | None) -> None:
        self.phone = phone
        self.device = device
        self.closed = False
        self.report_path: str | None = None

    def close(self, status: str, message: str = "") -> None:
        if not self.closed:
            self.closed = True
            self.phone.close(status=status, message=message)

    def fail(self, why: str) -> list[str]:
        """Close as failed, write the report; the lines naming the session and the report. Runs
        inside a report hook, where an exception would be pytest's internal error: a close or a
        report that cannot be written is said in the lines instead."""
        if self.closed:
            return []
        try:
            self.close("failed", why)
        except Exception as e:
            return [f"artemis session: {self.phone.session_id} (not closed: {type(e).__name__}: {e})"]
        if self.phone.session_id is None:
            return ["artemis: no session (the test failed before its first phone step)"]
        lines = [f"artemis session: {self.phone.session_id}"]
        try:
            self.report_path = str(self.phone.report())
            lines.append(f"artemis report: {self.report_path}")
        except Exception as e:
            lines.append(f"artemis report: not written ({type(e).__name__}: {e}); "
                         f"write it with: artemis report {self.phone.session_id} -o report.html")
        return [*lines, f"its steps: artemis sessions show {self.phone.session_id}"]

    def properties(self) -> Iterator[tuple[str, str]]:
        from artemis_cli.suite.junit import usd_text

        stats = self.phone.stats()
        if stats.session_id is None:
            return
        yield "session_id", stats.session_id
        if self.device:
            yield "device", self.device
        yield "steps", str(stats.steps)
        yield "model_calls", str(stats.model_calls)
        yield "cost_usd", usd_text(stats.cost_usd)
        yield "healed_steps", str(stats.healed_steps)
        yield "replayed_steps", str(stats.replayed_steps)
        if self.report_path:
            yield "report", self.report_path


def _outcome(item: pytest.Item) -> tuple[str, str]:
    """(status, message) the test's session closes with, from its phase reports."""
    reports = item.stash.get(_REPORTS, {})
    call = reports.get("call")
    if call is None:  # setup failed (closed by the hook), or the run stopped during the test
        return ("failed", "setup failed") if "setup" in reports and reports["setup"].failed \
            else ("interrupted", "the test run stopped")
    if call.failed or (call.skipped and hasattr(call, "wasxfail")):  # an expected failure failed too
        return "failed", "the test failed"
    if call.skipped:
        return "interrupted", "the test was skipped"
    return "succeeded", ""


@pytest.fixture
def phone(request: pytest.FixtureRequest) -> Iterator[Phone]:
    """An Artemis phone for this test (``artemis_cli.api.Phone``): one session named after the
    test, its AI steps cached under the test's node id, closed with the test's outcome."""
    from artemis_cli.api import ArtemisError, Phone

    settings = request.config.stash.get(_SETTINGS, None) or Settings(None, None, None, None, False)
    node = request.node
    try:
        # a numbered sim slot (sim#2) is this worker's own simulated phone, recorded by its name
        opened = Phone.open(settings.device, model=settings.model, profile=settings.profile,
                            data_dir=settings.data_dir, cache=node.nodeid, update=settings.update, name=node.nodeid)
    except ArtemisError as e:  # no device, a bad profile, …: the CLI's message and hint, not a traceback
        cannot = f"artemis: {e}" + (f"\nHint: {e.hint}" if e.hint else "")
    else:
        cannot = ""
    if cannot:
        pytest.fail(cannot, pytrace=False)  # outside the except: no chained tracebacks above it
    held = _Held(opened, settings.device)
    node.stash[_HELD] = held
    try:
        yield opened
    finally:
        del node.stash[_HELD]
        held.close(*_outcome(node))
        # what ``record_property`` does, without its warning under pytest's default junit_family
        # (xunit2): JUnit consumers read testcase properties (``artemis test --junit`` writes them too)
        node.user_properties.extend(held.properties())
