"""Task and profile files: schemas, loading, and validation errors that name file, line and field."""

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
