"""The milestone plan: stable ids that survive renames and revisions, recitation, JSON."""

from __future__ import annotations

import hashlib

import pytest

from artemis_cli.operators.pro.plan import (
    Milestone,
    Plan,
    PlanError,
    ProposedMilestone,
    milestone_id,
    revised_plan,
)


def test_milestone_id_is_sha1_of_normalised_title() -> None:
    want = hashlib.sha1(b"open settings").hexdigest()[:10]
    assert milestone_id("Open Settings") == want
    assert milestone_id("  open   SETTINGS ") == want
    # a collision with an id in use is salted, deterministically
    other = milestone_id("Open Settings", [want])
    assert other != want and len(other) == 10
    assert other == milestone_id("open settings", {want})


def test_rename_keeps_id_new_milestone_gets_new_id_and_version_bumps() -> None:
    v1 = Plan.from_titles(["Open Settings", "Turn on Wi-Fi", "Verify"])
    a, b, c = v1.milestones
    v2 = revised_plan(
        v1,
        [
            ProposedMilestone("Open the Settings app", id=a.id),  # renamed
            ProposedMilestone("Open Network & internet"),  # new
            ProposedMilestone("Turn on Wi-Fi"),  # kept, no id given: matched by title
            ProposedMilestone("Confirm Wi-Fi is ON", id=c.id),  # renamed
        ],
    )
    assert v2.version == 2
    assert [m.title for m in v2.milestones] == [
        "Open the Settings app", "Open Network & internet", "Turn on Wi-Fi", "Confirm Wi-Fi is ON"]
    assert v2.milestones[0].id == a.id
    assert v2.milestones[2].id == b.id
    assert v2.milestones[3].id == c.id
    assert v2.milestones[1].id not in {a.id, b.id, c.id}
    # a second revision renaming again still keeps the ids of v1
    v3 = revised_plan(v2, [ProposedMilestone("Settings open", id=a.id), ProposedMilestone("Wi-Fi on", id=b.id)])
    assert v3.version == 3 and v3.ids == [a.id, b.id]


def test_unknown_or_duplicate_ids_get_fresh_ids_and_done_is_inherited() -> None:
    v1 = Plan.from_titles(["A", "B"]).mark_done(milestone_id("A"))
    assert v1.version == 2 and v1.milestones[0].done
    a = v1.milestones[0]
    v2 = revised_plan(
        v1, [ProposedMilestone("A renamed", id=a.id), ProposedMilestone("copy", id=a.id),
             ProposedMilestone("ghost", id="ffffffffff")]
    )
    assert v2.milestones[0].id == a.id and v2.milestones[0].done  # done inherited
    assert len(set(v2.ids)) == 3
    assert not v2.milestones[1].done and not v2.milestones[2].done
    # done given explicitly wins
    v3 = revised_plan(v2, [ProposedMilestone("A renamed", id=a.id, done=False)])
    assert not v3.milestones[0].done


def test_current_and_recitation_golden() -> None:
    plan = Plan.from_titles(["Open Settings", "Turn on Wi-Fi", "Check the network name"], version=3)
    assert plan.current() == plan.milestones[0]
    plan = Plan(plan.milestones, 3).mark_done(plan.milestones[0].id)
    assert plan.version == 4
    assert plan.current() == plan.milestones[1]
    # the same checklist the Flash operator's plan tool keeps (memory.checklist.checklist_lines)
    assert plan.recitation() == (
        "Plan (v4, the planner's; work on the first unchecked milestone):\n"
        '- [x] "Open Settings"\n'
        '- [ ] "Turn on Wi-Fi"\n'
        '- [ ] "Check the network name"'
    )
    for m in plan.milestones:
        plan = plan.mark_done(m.id)
    assert plan.current() is None and plan.all_done
    assert plan.recitation().startswith("Plan (v6, the planner's; all milestones done):\n")
    assert plan.recitation().endswith('- [x] "Check the network name"')
    assert Plan().recitation() == "Plan (v1, the planner's): (no milestones)"
    # marking an unknown or done milestone changes nothing
    assert plan.mark_done("0000000000") is plan


def test_json_round_trip_and_bad_documents() -> None:
    plan = Plan.from_titles(["Open Settings", "Turn on Wi-Fi"]).mark_done(milestone_id("Open Settings"))
    assert Plan.from_json(plan.to_json()) == plan
    assert Plan.from_dict(plan.to_dict()) == plan
    assert Milestone.from_dict(plan.milestones[0].to_dict()) == plan.milestones[0]
    for bad in ("{", "[]", '{"version": 0}', '{"milestones": [{"id": "xyz", "title": "A"}]}',
                '{"milestones": [{"id": "aaaaaaaaaa", "title": "A"}, {"id": "aaaaaaaaaa", "title": "B"}]}'):
        with pytest.raises(PlanError):
            Plan.from_json(bad)
