"""The summary write rule (SPEC §5 invariant 3), as ONE conditional UPDATE.

Let the stored summary be ``(s0, v0)`` and the write ``(s, v)``:

1. ``v < v0``: rejected — a lower version never overwrites a higher one.
2. ``s0`` is ``pending`` or ``stale``: any status applies (at ``v >= v0``).
3. ``s0`` is ``failed``: ``ready`` and ``failed`` apply; ``pending`` never does, at any version;
   ``stale`` only at a strictly higher version.
4. ``s0`` is ``ready``: only ``ready`` applies (same version: last writer wins; a re-summarised
   step uses a higher version); ``pending`` and ``failed`` never do, at any version — a failed or
   restarted re-summary never erases a good summary; ``stale`` only at a strictly higher version.

So the SPEC's status prohibitions hold regardless of version, and the version check holds
regardless of status. ``stale`` (not restricted by the SPEC) is the one way to retire a
``ready``/``failed`` summary, and it must open a new version (``v > v0``); the new version's
``pending``/``ready``/``failed`` writes then proceed normally.

Restricted to ``pending``/``failed``/``ready`` the rule is the product order
``v >= v0 and rank(s) >= rank(s0)`` with ``pending < failed < ready``: states only move up, so
concurrent writers always end in a maximal write (a unique greatest write always wins).

An applied write sets status, version, source and model; ``summary`` text is replaced only when
the write carries text (``stale``/``pending`` writes keep the previous text for the record).
Because the condition is part of the UPDATE's WHERE clause, there is no read-then-write race,
even between processes sharing the data dir.
"""

from __future__ import annotations

SUMMARY_UPDATE_SQL = """
UPDATE steps SET
    summary_status = :status,
    summary_version = :version,
    summary = COALESCE(:text, summary),
    summary_source = :source,
    summary_model = :model
WHERE session_id = :session_id AND number = :number
  AND summary_version <= :version
  AND (
        summary_status IN ('pending', 'stale')
     OR (summary_status = 'failed' AND (:status IN ('ready', 'failed')
                                        OR (:status = 'stale' AND summary_version < :version)))
     OR (summary_status = 'ready' AND (:status = 'ready'
                                       OR (:status = 'stale' AND summary_version < :version)))
  )
"""
