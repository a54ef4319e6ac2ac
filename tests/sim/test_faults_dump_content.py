"""The dump-content faults ``garbage_xml:P`` and ``empty_hierarchy:P`` (seeded, reproducible)."""

from __future__ import annotations

import pytest

from artemis_cli.errors import HierarchyParseError, UsageError
from artemis_cli.operators.observe import observe
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.sim import SimPhone
from artemis_cli.sim.faults import EMPTY_HIERARCHY_XML, FaultInjector, _seed_key, parse_faults
from artemis_cli.sim.hierarchy_xml import U2_HEADER


def _dumps(phone: SimPhone, n: int = 40) -> list[str]:
    return [phone.hierarchy() for _ in range(n)]


@pytest.mark.parametrize("spec", ["garbage_xml:0.4", "empty_hierarchy:0.4"])
def test_content_faults_are_seeded_and_reproducible(spec: str) -> None:
    a = _dumps(SimPhone(seed=3, faults=spec))
    assert a == _dumps(SimPhone(seed=3, faults=spec))
    assert a != _dumps(SimPhone(seed=4, faults=spec))
    real = [x for x in a if x.startswith(U2_HEADER) and x.endswith("</hierarchy>") and "<node" in x]
    assert real and len(real) < len(a)  # both real and faulty dumps happen
    assert all(parse_hierarchy(x, screen_size=(1080, 2400)).nodes for x in real)


def test_garbage_xml_always_makes_the_parser_raise_hierarchy_parse_error() -> None:
    for seed in range(120):
        phone = SimPhone(seed=seed, faults="garbage_xml:1")
        xml = phone.hierarchy()
        assert isinstance(xml, str) and xml != phone.dump_xml()
        with pytest.raises(HierarchyParseError):
            parse_hierarchy(xml, screen_size=(1080, 2400))
        assert phone.faults.log[-1] == "garbage_xml"


def test_empty_hierarchy_is_a_valid_dump_without_nodes() -> None:
    phone = SimPhone(seed=0, faults="empty_hierarchy:1")
    xml = phone.hierarchy()
    assert xml == EMPTY_HIERARCHY_XML
    tree = parse_hierarchy(xml, screen_size=(1080, 2400))
    assert tree.nodes == () and tree.warnings == ()


def test_shell_dump_writes_the_faulty_content_to_the_file() -> None:
    phone = SimPhone(seed=0, faults="empty_hierarchy:1")
    assert phone.run("uiautomator dump").exit_code == 0
    assert phone.read_file("/sdcard/window_dump.xml").decode() == EMPTY_HIERARCHY_XML
    garbage = SimPhone(seed=0, faults="garbage_xml:1")
    garbage.run("uiautomator dump")
    with pytest.raises(HierarchyParseError):
        parse_hierarchy(garbage.read_file("/sdcard/window_dump.xml"))


def test_parse_faults_accepts_the_new_kinds_and_checks_their_range() -> None:
    spec = parse_faults("garbage_xml:0.25, empty_hierarchy:1")
    assert (spec.garbage_xml, spec.empty_hierarchy) == (0.25, 1.0) and spec.any
    with pytest.raises(UsageError):
        parse_faults("garbage_xml:2")
    with pytest.raises(UsageError):
        parse_faults("empty_hierarchy:lots")


def test_older_fault_specs_keep_their_random_streams() -> None:
    """Adding fields must not reseed existing specs: their key is the old dataclass repr."""
    spec = parse_faults("idle_state:0.2,drop:0.1,popup_storm")
    assert _seed_key(spec) == ("FaultSpec(idle_state=0.2, null_root=0.0, stale_dump=0.0, screencap_fail=0.0, "
                               "latency_ms=0, drop=0.1, popup_storm=True)")
    assert "garbage_xml=0.5" in _seed_key(parse_faults("garbage_xml:0.5"))
    a, b = FaultInjector(spec, 9), FaultInjector(spec, 9)
    assert [a.dump_fault() for _ in range(50)] == [b.dump_fault() for _ in range(50)]


@pytest.mark.parametrize("spec", ["garbage_xml:0.3", "empty_hierarchy:0.3"])
def test_observe_re_dumps_until_it_gets_a_usable_hierarchy(spec: str) -> None:
    phone = SimPhone(seed=2, faults=spec)
    recovered = 0
    for _ in range(20):
        problems: list[str] = []
        obs = observe(phone, (1080, 2400), "pixels", sleep=lambda s: None,
                      on_problem=lambda what, detail, problems=problems: problems.append(detail))
        if obs.tree.nodes:
            assert obs.elements and not obs.problems
            recovered += bool(problems)  # a faulty dump was re-dumped into a good one
        else:
            assert obs.problems  # never a silent empty screen
    assert recovered >= 2


def test_observe_keeps_going_when_every_dump_is_garbage_or_empty() -> None:
    garbage = observe(SimPhone(faults="garbage_xml:1"), (1080, 2400), "pixels", sleep=lambda s: None)
    assert garbage.tree.nodes == () and "unreadable" in garbage.problems[0]
    empty = observe(SimPhone(faults="empty_hierarchy:1"), (1080, 2400), "pixels", sleep=lambda s: None)
    assert empty.tree.nodes == () and "empty" in empty.problems[0]
