"""recall_history (SPEC §10.5): look back at what a session recorded.

Four ways in, combinable:

* ``query`` — full-text search (FTS5) over step summaries, actions with semantics, validator
  results, thoughts, UI text, notes and chunks (:mod:`~artemis_cli.memory.recall_search`);
* ``step_range`` — steps by number: the range's full-width band ③ ledger lines, plus for each
  step what it showed: its screen text (before its action) and visual summary (a :class:`StepView`);
* ``at`` — a session time ``T+mm:ss``: the step at or just before it and its neighbours, as a range;
* ``package`` — only the steps whose foreground app is that package (alone: that app's most
  recent steps).

Rules: every result carries its step number and ``T+mm:ss``; at most ``max_results`` search
results; about ``max_text_tokens`` (characters / 4) of text in all, spent on the ledger lines a
range asks for (always whole), then search results (cut per result, never the step header), then
screens in order of interest (the anchor of ``at`` first); what did not fit is named, with how to
ask for it. ``include_images`` returns at most one step's screenshot. A request with no query,
range, time or package raises :class:`RecallError`.

The parts live in ``recall_args`` (arguments), ``recall_text`` (screen text, snippets, cutting),
``recall_index`` (FTS writes), ``recall_search`` (search and ranking) and ``recall_result``.
"""

from __future__ import annotations

from collections.abc import Sequence

from artemis_cli.engine.clock import format_offset
from artemis_cli.engine.errors import BlobMissing
from artemis_cli.engine.records import StepRecord
from artemis_cli.memory.ledger_lines import ledger_lines
from artemis_cli.memory.notes import engine_lock
from artemis_cli.memory.recall_args import (
    MAX_RANGE_STEPS,
    RecallError,
    parse_at,
    parse_package,
    parse_step_range,
    query_phrases,
    query_terms,
)
from artemis_cli.memory.recall_index import STEP_KINDS, RecallIndex, step_fields, verdict_text
from artemis_cli.memory.recall_result import (
    RecallHit,
    RecallImage,
    RecallResult,
    StepView,
    fit_hits,
    step_runs,
)
from artemis_cli.memory.recall_search import ScreenCache, Search, build_hits
from artemis_cli.memory.recall_text import Matcher, flat, safe_cut, ui_text_from_xml
from artemis_cli.perception.quoting import quote_untrusted
from artemis_cli.plural import counted

__all__ = [
    "DEFAULT_MAX_RESULTS",
    "DEFAULT_MAX_TEXT_TOKENS",
    "MAX_RANGE_STEPS",
    "MAX_RESULTS_LIMIT",
    "STEP_KINDS",
    "Recall",
    "RecallError",
    "RecallHit",
    "RecallImage",
    "RecallResult",
    "StepView",
    "parse_at",
    "parse_package",
    "parse_step_range",
    "query_terms",
    "step_fields",
    "ui_text_from_xml",
]

DEFAULT_MAX_RESULTS = 5  # memory.recall.max_results (SPEC §13)
DEFAULT_MAX_TEXT_TOKENS = 2000  # memory.recall.max_text_tokens
MAX_RESULTS_LIMIT = 20
CHARS_PER_TOKEN = 4
AT_NEIGHBOURS = 2  # ``at`` shows this many steps either side of the one at that time
_MIN_TEXT_CHARS = 400  # search results keep at least this much room even beside a long range
_DETAIL_CHARS = 600


class Recall(RecallIndex):
    """Index writes (:class:`RecallIndex`) and ``recall`` queries over one DataEngine."""

    def recall(
        self,
        session_id: str,
        query: str = "",
        *,
        step_range: tuple[int, int] | Sequence[int] | str | None = None,
        at: str | None = None,
        package: str | None = None,
        include_details: bool = False,
        include_images: bool = False,
        max_results: int = DEFAULT_MAX_RESULTS,
        max_text_tokens: int = DEFAULT_MAX_TEXT_TOKENS,
    ) -> RecallResult:
        query = query if isinstance(query, str) else ""
        terms = query_terms(query)
        rng = parse_step_range(step_range)
        at_ms = parse_at(at)
        app = parse_package(package)
        if rng is not None and at_ms is not None:
            raise RecallError("give step_range or at, not both", hint='e.g. step_range="40-44" or at="T+12:30"')
        if not terms and rng is None and at_ms is None and app is None:
            raise RecallError(
                "recall_history needs a query (words to search for), a step_range, an at time or a package",
                hint='e.g. query="wifi password", step_range="12-20", at="T+12:30" or package="com.android.settings"',
            )
        limit = min(max(int(max_results or DEFAULT_MAX_RESULTS), 1), MAX_RESULTS_LIMIT)
        tokens = max(int(max_text_tokens or DEFAULT_MAX_TEXT_TOKENS), 1)
        budget = tokens * CHARS_PER_TOKEN
        with engine_lock(self.engine):
            session_id = self.engine.get_session(session_id).id  # SessionNotFound; prefixes work
            result = RecallResult(session_id=session_id, query=query, terms=terms, step_range=rng, hits=[],
                                  total_matches=0, max_results=limit, at=at if at_ms is not None else None,
                                  package=app)
            self.sync(session_id)
            if self.engine.read_only and (unindexed := self._unindexed(session_id)):
                result.notices.append(
                    f"Note: the data dir is read-only and {unindexed} step(s) are not indexed yet; "
                    "their text is not searched (a step_range still shows their ledger lines and screens)."
                )
            candidates, priority = self._selection(result, at_ms, budget)
            screens = ScreenCache(self.engine)
            if terms:
                matcher = Matcher(terms, query_phrases(query))
                ranked = Search(self.engine, session_id, matcher, result.step_range, app).run()
                result.total_matches = len(ranked)
                hits = build_hits(self.engine, session_id, ranked[:limit], matcher, include_details, screens)
                result.hits = hits  # for the header's count; cut below
                used = len(result.render()) + 1 - _chars([h.text() for h in hits])
                result.hits = fit_hits(hits, max(budget - used, _MIN_TEXT_CHARS))
            used = len(result.render()) + 1
            self._views(result, [candidates[n] for n in priority], budget - used, include_details, screens, tokens)
            if include_images:  # the step asked for by time, the best hit, the last step of the range
                order = [*([result.at_step] if result.at_step else []),
                         *(h.step for h in result.hits if h.kind == "step"), *sorted(candidates, reverse=True)]
                result.image, notice = self._image(session_id, order)
                if notice:
                    result.notices.append(notice)
        return result

    # --- which steps: range, time, app ---------------------------------------------------------

    def _selection(self, result: RecallResult, at_ms: int | None, budget: int,
                   ) -> tuple[dict[int, StepRecord], list[int]]:
        """The steps whose screens may be shown, and their order of interest; fills the result's
        range (from ``at``), ledger lines, lead lines and notices."""
        sid, app = result.session_id, result.package
        priority: list[int] = []
        if at_ms is not None:
            result.step_range, priority = self._at(result, at_ms)
        rng = result.step_range
        if rng is None:
            if app is not None and not result.terms:
                return self._app_steps(result, app, budget)
            return {}, []
        range_steps = self.engine.get_steps(sid, rng[0], rng[1])
        for step in range_steps:
            result.range_lines += ledger_lines(step)
        if not range_steps:
            last = self.engine.last_step_number(sid)
            have = f"steps 1-{last}" if last else "no steps yet"
            result.notices.append(f"Note: no steps {rng[0]}-{rng[1]} in this session (it has {have}).")
        candidates = {s.number: s for s in range_steps if app is None or s.foreground_app == app}
        return candidates, [n for n in (priority or candidates) if n in candidates]


    def _at(self, result: RecallResult, at_ms: int) -> tuple[tuple[int, int] | None, list[int]]:
        """The step at or just before ``at_ms`` and its neighbours: (range, screen priority)."""
        db, sid = self.engine.db, result.session_id
        row = db.execute(
            "SELECT number, offset_ms FROM steps WHERE session_id = ? AND offset_ms <= ? "
            "ORDER BY offset_ms DESC, number DESC LIMIT 1",
            [sid, at_ms],
        ).fetchone()
        when = format_offset(at_ms)
        if row is None:
            row = db.execute(
                "SELECT number, offset_ms FROM steps WHERE session_id = ? AND offset_ms IS NOT NULL "
                "ORDER BY number LIMIT 1",
                [sid],
            ).fetchone()
            if row is None:
                result.lead.append(f"No step of this session has a time yet ({when} asked).")
                return None, []
            result.lead.append(f"{when} is before the first step; step {row[0]} ({format_offset(row[1])}) is the first.")
        else:
            result.lead.append(f"At {when}: step {row[0]} ({format_offset(row[1])}) is the step at or just before it.")
        anchor = int(row[0])
        result.at_step = anchor
        last = self.engine.last_step_number(sid)
        a, b = max(1, anchor - AT_NEIGHBOURS), min(max(last, anchor), anchor + AT_NEIGHBOURS)
        priority = [anchor]
        for k in range(1, AT_NEIGHBOURS + 1):
            priority += [n for n in (anchor + k, anchor - k) if a <= n <= b]
        return (a, b), priority

    def _app_steps(self, result: RecallResult, app: str, budget: int) -> tuple[dict[int, StepRecord], list[int]]:
        """A package alone: that app's most recent steps (ledger lines for as many as fit in
        half the budget, screens of the latest first)."""
        sid = result.session_id
        numbers = [int(r[0]) for r in self.engine.db.execute(
            "SELECT number FROM steps WHERE session_id = ? AND foreground_app = ? ORDER BY number", [sid, app])]
        if not numbers:
            apps = [f"{r[0]} ({counted(r[1], 'step')})" for r in self.engine.db.execute(
                "SELECT foreground_app, count(*) FROM steps WHERE session_id = ? AND foreground_app IS NOT NULL "
                "GROUP BY foreground_app ORDER BY min(number)", [sid])]
            result.lead.append(f"No step of this session was in {app}. Apps seen: {', '.join(apps) or 'none'}.")
            return {}, []
        result.lead.append(f"Steps in {app}: {step_runs(numbers)} ({len(numbers)} step{'s' if len(numbers) > 1 else ''}).")
        recent = self.engine.steps_numbered(sid, numbers[-MAX_RANGE_STEPS:])
        lines: list[list[str]] = []
        room = budget // 2
        for step in reversed(recent):
            step_lines = ledger_lines(step)
            if lines and _chars([line for ls in lines for line in ls] + step_lines) > room:
                break
            lines.insert(0, step_lines)
        kept = recent[len(recent) - len(lines):]
        result.ledger_title = f"Ledger of the latest steps in {app}:" if len(kept) < len(numbers) else \
            f"Ledger of the steps in {app}:"
        result.range_lines = [line for ls in lines for line in ls]
        if len(kept) < len(numbers):
            earlier = numbers[: len(numbers) - len(kept)]
            result.notices.append(
                f"Note: the ledger lines of earlier steps in {app} ({step_runs(earlier)}) are not shown; "
                f'ask for them with step_range, e.g. step_range="{earlier[-1]}-{earlier[-1]}".'
            )
        return {s.number: s for s in kept}, [s.number for s in reversed(kept)]

    # --- screens -------------------------------------------------------------------------------

    def _views(self, result: RecallResult, steps: list[StepRecord], room: int, details: bool,
               screens: ScreenCache, tokens: int) -> None:
        views: list[StepView] = []
        left = room
        for i, step in enumerate(steps):
            view = _view(step, screens, details).fitted(left - 1) if left > 0 else None
            if view is None:
                missing = sorted(s.number for s in steps[i:])
                end = missing[0]
                while end + 1 in missing[:3]:
                    end += 1
                few = f"{missing[0]}-{end}"
                result.notices.append(
                    f"Note: screens of step(s) {step_runs(missing)} are not shown (the answer is capped at "
                    f'about {tokens} tokens); ask for fewer steps at a time, e.g. step_range="{few}".'
                )
                break
            views.append(view)
            left -= len(view.text()) + 1
        result.views = sorted(views, key=lambda v: v.step)

    def _image(self, session_id: str, candidates: list[int]) -> tuple[RecallImage | None, str | None]:
        """At most one screenshot: the first of ``candidates`` (in order of interest) that has one."""
        for number in dict.fromkeys(candidates):
            step = self.engine.steps_numbered(session_id, [number]) if number > 0 else []
            if step and step[0].pre_screenshot:
                sha = step[0].pre_screenshot
                try:
                    return RecallImage(number, sha, self.engine.blob(sha)), None
                except BlobMissing:
                    return None, f"Note: the screenshot of step {number} is missing from the data dir."
        if candidates:
            return None, "Note: no screenshot is recorded for these steps."
        return None, None


def _chars(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _view(step: StepRecord, screens: ScreenCache, details: bool) -> StepView:
    screen = screens.of(step)
    summary = step.summary if step.summary_status == "ready" and step.summary else None
    extra: list[str] = []
    if details:
        for label, text in (("thought", step.thought or ""), ("validator", verdict_text(step.verdict))):
            if text.strip():
                extra.append(f"{label}: {quote_untrusted(safe_cut(flat(text), _DETAIL_CHARS), None)}")
    return StepView(
        step=step.number,
        offset_ms=step.offset_ms or 0,
        app=step.foreground_app,
        summary=safe_cut(flat(summary), _DETAIL_CHARS) if summary else None,
        lines=tuple(screen.lines()),
        keyboard=screen.keyboard,
        problem=screen.problem,
        details=tuple(extra),
    )
