"""Load a YAML file into plain Python data *and* remember the line of every node.

``load_yaml_file`` composes the node tree with PyYAML's ``SafeLoader`` and builds the data itself,
so that every value can be traced back to its source line for error messages:

- ``YamlDocument.lines[path]`` is the 1-based line where the node at ``path`` starts;
- ``YamlDocument.key_lines[path]`` is the line of the *key* of a mapping entry.

A path is a tuple of mapping keys (``str``) and sequence indices (``int``): ``("reference", 3,
"tap", "text")``.  Mapping keys are always strings, taken verbatim from the source (so ``on:`` is
the key ``"on"``, not YAML 1.1's ``True``).  Merge keys (``<<: *anchor``) are honoured.

Everything that is not a mapping at the top level, any YAML syntax error, duplicate keys and
recursive aliases raise ``ConfigError(path, line, None, message)``.  A file over ``MAX_FILE_BYTES``
(1 MB) is refused before it is read.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from artemis_cli.errors import ConfigError

FieldPath = tuple[str | int, ...]

MERGE_TAG = "tag:yaml.org,2002:merge"
MAX_NODES = 200_000  # guards against alias bombs ("billion laughs")
MAX_DEPTH = 64  # no Artemis file nests anywhere near this deep
MAX_FILE_BYTES = 1024 * 1024  # task and profile files are a few KB; checked before reading


def format_field_path(path: FieldPath) -> str:
    """``("success", 1, "equals")`` -> ``success[1].equals``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


@dataclass
class YamlDocument:
    """Plain data of one YAML file plus the source line of every node and mapping key."""

    path: str
    data: dict[str, Any]
    lines: dict[FieldPath, int] = field(default_factory=dict)
    key_lines: dict[FieldPath, int] = field(default_factory=dict)

    def has(self, path: FieldPath) -> bool:
        return path in self.lines

    def line_of(self, path: FieldPath) -> int | None:
        """Line of the node at ``path``, or of its nearest existing ancestor."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None

    def key_line_of(self, path: FieldPath) -> int | None:
        """Line of the key of the entry at ``path`` (falls back to :meth:`line_of`)."""
        return self.key_lines.get(path) or self.line_of(path)

    def value_at(self, path: FieldPath) -> tuple[bool, Any]:
        """``(True, value)`` when ``path`` exists in the data, else ``(False, None)``."""
        node: Any = self.data
        for part in path:
            if not _has_child(node, part):
                return False, None
            node = node[part]
        return True, node


def _has_child(node: Any, part: str | int) -> bool:
    if isinstance(node, list):
        return isinstance(part, int) and 0 <= part < len(node)
    return isinstance(node, dict) and isinstance(part, str) and part in node


def load_yaml_file(path: str | Path) -> YamlDocument:
    """Read and parse ``path``; every failure is a ``ConfigError`` naming the file."""
    shown = str(path)
    try:
        info = Path(path).stat()
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_FILE_BYTES:
            raise ConfigError(shown, None, None,
                              f"file too large: {_size(info.st_size)}; the limit is {_size(MAX_FILE_BYTES)}")
        with open(path, "rb") as fh:  # bounded: a FIFO or device has no size to check beforehand
            raw = fh.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise ConfigError(shown, None, None, f"file too large: more than {_size(MAX_FILE_BYTES)}")
    except FileNotFoundError:
        raise ConfigError(shown, None, None, "file not found") from None
    except IsADirectoryError:
        raise ConfigError(shown, None, None, "is a directory, not a YAML file") from None
    except OSError as exc:
        raise ConfigError(shown, None, None, f"cannot read file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(shown, line, None, "file is not valid UTF-8 text") from None
    return load_yaml_text(text, shown)


def _size(n: int) -> str:
    """``2097152`` -> ``"2.0 MB (2,097,152 bytes)"``."""
    return f"{n / (1024 * 1024):.1f} MB ({n:,} bytes)"


def load_yaml_text(text: str, path: str) -> YamlDocument:
    """Parse ``text`` (shown as ``path`` in errors) into a :class:`YamlDocument`."""
    loader: yaml.SafeLoader | None = None
    try:
        loader = yaml.SafeLoader(text)
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        context = exc.context_mark
        if exc.problem and exc.context and context is not None and context.line + 1 != line:
            problem += f" ({exc.context} on line {context.line + 1})"
        raise ConfigError(path, line, None, f"YAML syntax error: {problem}") from None
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise ConfigError(path, line, None, f"YAML syntax error: {exc.reason}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(path, None, None, f"YAML syntax error: {exc}") from None
    except RecursionError:
        raise ConfigError(path, None, None, "YAML nesting is too deep") from None
    finally:
        if loader is not None:
            loader.dispose()
    if root is None:
        raise ConfigError(path, 1, None, "the file is empty; expected a mapping of keys to values")
    if not isinstance(root, MappingNode):
        raise ConfigError(
            path, root.start_mark.line + 1, None,
            f"the top level must be a mapping of keys to values, not {_node_kind(root)}",
        )
    builder = _Builder(path)
    data = builder.build(root, ())
    assert isinstance(data, dict)
    return YamlDocument(path=path, data=data, lines=builder.lines, key_lines=builder.key_lines)


def _node_kind(node: Node) -> str:
    if isinstance(node, SequenceNode):
        return "a list"
    if isinstance(node, MappingNode):
        return "a mapping"
    return "a single value"


class _Builder:
    """Turns a composed node tree into plain data while recording lines per path."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lines: dict[FieldPath, int] = {}
        self.key_lines: dict[FieldPath, int] = {}
        self._constructor = yaml.SafeLoader("")
        self._active: set[int] = set()
        self._count = 0

    def _error(self, node: Node, message: str, path: FieldPath = ()) -> ConfigError:
        return ConfigError(self.path, node.start_mark.line + 1, format_field_path(path) or None, message)

    def build(self, node: Node, path: FieldPath) -> Any:
        self._count += 1
        if self._count > MAX_NODES:
            raise self._error(node, f"document too large (more than {MAX_NODES} values after aliases)")
        if len(path) > MAX_DEPTH:
            raise self._error(node, f"nested more than {MAX_DEPTH} levels deep")
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, ScalarNode):
            try:
                return self._constructor.construct_object(node, deep=True)
            except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
                problem = getattr(exc, "problem", None) or str(exc).split(";")[0]
                raise self._error(node, f"invalid value: {problem}", path) from None
        if id(node) in self._active:
            raise self._error(node, "recursive alias (a node that contains itself)")
        self._active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                return [self.build(item, (*path, index)) for index, item in enumerate(node.value)]
            assert isinstance(node, MappingNode)
            return self._build_mapping(node, path)
        finally:
            self._active.discard(id(node))

    def _build_mapping(self, node: MappingNode, path: FieldPath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        merges: list[MappingNode] = []
        for key_node, value_node in node.value:
            if key_node.tag == MERGE_TAG:
                merges.extend(self._merge_sources(value_node))
                continue
            if not isinstance(key_node, ScalarNode):
                raise self._error(key_node, "mapping keys must be plain words, not lists or mappings")
            key = str(key_node.value)
            if key in result:
                first = self.key_lines.get((*path, key))
                where = f" (first defined on line {first})" if first else ""
                raise self._error(key_node, f"duplicate key '{key}'{where}")
            self.key_lines[(*path, key)] = key_node.start_mark.line + 1
            result[key] = self.build(value_node, (*path, key))
        for source in merges:  # explicit keys win; earlier merge sources win over later ones
            for key_node, value_node in source.value:
                if not isinstance(key_node, ScalarNode) or key_node.tag == MERGE_TAG:
                    continue
                key = str(key_node.value)
                if key in result:
                    continue
                self.key_lines[(*path, key)] = key_node.start_mark.line + 1
                result[key] = self.build(value_node, (*path, key))
        return result

    def _merge_sources(self, value_node: Node) -> list[MappingNode]:
        if isinstance(value_node, MappingNode):
            return [value_node]
        if isinstance(value_node, SequenceNode) and all(
            isinstance(item, MappingNode) for item in value_node.value
        ):
            return list(value_node.value)
        raise self._error(value_node, "'<<' must be followed by a mapping or a list of mappings")
