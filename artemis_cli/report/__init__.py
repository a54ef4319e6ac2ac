"""Self-contained HTML report of a recorded session (SPEC §11)."""

from artemis_cli.report.html import build_report, write_report

__all__ = ["build_report", "write_report"]
