"""HTML report of a recorded session (SPEC §11): summary first, then the timeline."""

from artemis_cli.report.html import build_report, render_report, write_report

__all__ = ["build_report", "render_report", "write_report"]
