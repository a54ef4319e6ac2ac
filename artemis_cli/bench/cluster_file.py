"""``--devices-file cluster.yaml``: which hosts of a Ray cluster own which phones (docs/scale.md).

```yaml
hosts:
  - address: 10.0.0.5          # the host's Ray node IP (what `ray status` / ray.nodes() show)
    adb_port: 5037             # that host's own adb server (default 5037), reached from the host itself
    devices: [R58M123ABC, 127.0.0.1:7555]   # adb serials; leave out to ask that adb server
    work_dir: /var/tmp/artemis-ray          # optional: where the host's actors record (default: its temp dir)
  - address: 10.0.0.6
```

Every phone gets one Ray actor pinned to the node that owns it through the custom resource
``artemis_device:<serial>`` (declare it with ``ray start --resources``); a host without a
``devices`` list is asked through its adb server, inside a task on that host. A serial may be
listed once in the whole file (its resource name is cluster-wide), each host
(address and adb_port) once. Errors name the file, line and
field like every other config file: ``cluster.yaml:7: hosts[1].devices[0]: …``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, model_validator

from artemis_cli.config.issues import ConfigIssue, raise_issues
from artemis_cli.config.task import Int, NonEmpty, StrictModel
from artemis_cli.config.validation import DocumentLocator, fail, validate_model
from artemis_cli.config.yaml_source import load_yaml_file

#: the custom Ray resource a node advertises for each phone it owns (``= 1``)
DEVICE_RESOURCE_PREFIX = "artemis_device:"
DEFAULT_ADB_PORT = 5037

_NO_SPACE = re.compile(r"^\S+$")


def _check_serial(value: str) -> str:
    if not _NO_SPACE.match(value):
        raise fail(f"must be an adb serial without spaces, as `adb devices` prints it (got {value!r})")
    if value == "sim":
        raise fail("'sim' is the in-process simulated phone, not an adb device; serve one with "
                   "`artemis sim serve` and list its serial (127.0.0.1:PORT)")
    return value


def _check_address(value: str) -> str:
    if not _NO_SPACE.match(value) or "://" in value or "/" in value:
        raise fail(f"must be a host name or IP address such as 10.0.0.5 (got {value!r})")
    return value


Serial = Annotated[str, AfterValidator(_check_serial)]
Address = Annotated[NonEmpty, AfterValidator(_check_address)]


class ClusterHost(StrictModel):
    """One host: its Ray node address, its adb server's port and (optionally) its phones."""

    address: Address
    adb_port: Int = Field(default=DEFAULT_ADB_PORT, ge=1, le=65535)
    devices: list[Serial] | None = Field(default=None, min_length=1)
    work_dir: NonEmpty | None = None

    @model_validator(mode="after")
    def _unique_devices(self) -> ClusterHost:
        seen: set[str] = set()
        for serial in self.devices or []:
            if serial in seen:
                raise fail(f"device {serial!r} is listed twice", key="devices")
            seen.add(serial)
        return self


class ClusterFile(StrictModel):
    hosts: list[ClusterHost] = Field(min_length=1)

    @property
    def serials(self) -> list[str]:
        return [s for h in self.hosts for s in h.devices or []]


def device_resource(serial: str) -> str:
    """The custom Ray resource a node advertises (``= 1``) for the phone ``serial``."""
    return DEVICE_RESOURCE_PREFIX + serial


def load_cluster_file(path: str | Path) -> ClusterFile:
    """Load and validate ``cluster.yaml``; every problem is one ``ConfigError`` naming file and line."""
    doc = load_yaml_file(path)
    cluster = validate_model(ClusterFile, dict(doc.data), DocumentLocator(doc))
    issues: list[ConfigIssue] = []
    owner: dict[str, int] = {}
    servers: dict[tuple[str, int], int] = {}
    for i, host in enumerate(cluster.hosts):
        server = (host.address, host.adb_port)
        if server in servers:
            issues.append(ConfigIssue(doc.path, doc.line_of(("hosts", i)), f"hosts[{i}]",
                                      f"{host.address} with adb_port {host.adb_port} is already hosts[{servers[server]}] "
                                      f"(line {doc.line_of(('hosts', servers[server]))}); list its devices under one entry"))
        servers.setdefault(server, i)
        for j, serial in enumerate(host.devices or []):
            if serial in owner:
                first = owner[serial]
                issues.append(ConfigIssue(
                    doc.path, doc.line_of(("hosts", i, "devices", j)), f"hosts[{i}].devices[{j}]",
                    f"device {serial!r} is also listed under hosts[{first}] (line "
                    f"{doc.line_of(('hosts', first))}); a serial names one phone cluster-wide (its Ray "
                    f"resource is {device_resource(serial)})"))
            owner.setdefault(serial, i)
    if issues:
        raise_issues(issues)
    return cluster


def cluster_file_data(cluster: ClusterFile) -> dict[str, Any]:
    """The file as plain data (what the results record)."""
    return cluster.model_dump(exclude_none=True)
