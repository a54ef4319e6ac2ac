"""The Pro loop's auxiliary agents (SPEC §9): planner, validator, failure analyzer, checker,
the milestone plan they share, and the table of context policies that feeds them history."""

from .checker import Checker, CheckerVerdict
from .failure_analyzer import RECOVERY_EVENT, FailureAnalyzer, RecoveryAction
from .plan import Milestone, Plan, PlanError, milestone_id, revised_plan
from .planner import Planner
from .policies import CONTEXT_POLICIES, ContextPolicy, compile_view, policy_for
from .prompts import FIRST_LINES, SYSTEM_PROMPTS, role_of_system
from .structured import Outcome, RecordCall, ReplyError
from .validator import VERDICTS, Validator, Verdict

__all__ = [
    "CONTEXT_POLICIES",
    "FIRST_LINES",
    "RECOVERY_EVENT",
    "SYSTEM_PROMPTS",
    "VERDICTS",
    "Checker",
    "CheckerVerdict",
    "ContextPolicy",
    "FailureAnalyzer",
    "Milestone",
    "Outcome",
    "Plan",
    "PlanError",
    "Planner",
    "RecordCall",
    "RecoveryAction",
    "ReplyError",
    "Validator",
    "Verdict",
    "compile_view",
    "milestone_id",
    "policy_for",
    "revised_plan",
    "role_of_system",
]
