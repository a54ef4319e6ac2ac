"""Export a recorded session: JSONL trajectory (``jsonl``) and Maestro flow YAML (``maestro``)."""

from artemis_cli.export.jsonl import JSONL_FIELDS, export_jsonl, step_line
from artemis_cli.export.maestro import MaestroFlow, export_maestro, maestro_flow

FORMATS: tuple[str, ...] = ("jsonl", "maestro")

__all__ = ["FORMATS", "JSONL_FIELDS", "MaestroFlow", "export_jsonl", "export_maestro", "maestro_flow", "step_line"]
