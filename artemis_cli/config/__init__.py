"""Task and profile files: schemas, loading, and validation errors that name file, line and field.

The names below are loaded on first use: the schemas are pydantic models whose construction
costs most of the CLI's start-up, and ``artemis --help`` or ``sessions list`` need none of them
(``import artemis_cli.config.issues`` must not build them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from artemis_cli.lazy import lazy_names

if TYPE_CHECKING:
    from .issues import ConfigIssue, issues_of
    from .profile import MemorySettings, ModelRole, ModelRoles, Profile, load_profile
    from .task import (
        Injection,
        ReferenceAction,
        Selector,
        SetupStep,
        SimOptions,
        SuccessCheck,
        Task,
        load_task,
        task_from_goal,
    )

_WHERE = {
    "ConfigIssue": "issues", "issues_of": "issues",
    "MemorySettings": "profile", "ModelRole": "profile", "ModelRoles": "profile", "Profile": "profile",
    "load_profile": "profile",
    "Injection": "task", "ReferenceAction": "task", "Selector": "task", "SetupStep": "task", "SimOptions": "task",
    "SuccessCheck": "task", "Task": "task", "load_task": "task", "task_from_goal": "task",
}

__all__ = [
    "ConfigIssue",
    "Injection",
    "MemorySettings",
    "ModelRole",
    "ModelRoles",
    "Profile",
    "ReferenceAction",
    "Selector",
    "SetupStep",
    "SimOptions",
    "SuccessCheck",
    "Task",
    "issues_of",
    "load_profile",
    "load_task",
    "task_from_goal",
]


__getattr__ = lazy_names(__name__, _WHERE)
