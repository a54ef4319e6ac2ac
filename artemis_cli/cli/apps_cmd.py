"""``artemis apps``: the apps on a device, or what each name resolves to there."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from artemis_cli.cli.tables import PlainOpt


def apps(
    names: Annotated[list[str] | None, typer.Argument(
        help="App names to resolve (\"Messages\", \"Play Store\", a package). Without: list the launchable apps.",
        show_default=False)] = None,
    device: Annotated[str | None, typer.Option(
        "--device", "-d", help="Serial from `artemis devices`, or sim / sim:<world>. Default: $ANDROID_SERIAL, "
                               "the one attached device, else the simulated phone.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    plain: PlainOpt = False,
) -> None:
    """List a device's launchable apps, or resolve each NAME to the package a person means on
    that phone and say how (package, alias, label, fuzzy) with the alternatives; a name that is
    not installed is shown with the launchable apps whose name is like it (else with the
    launchable apps). Misses are answers, not errors (exit 0); exit 2 on bad usage, 3 when the
    device is unavailable."""
    from artemis_cli.device.app_list import installed_packages, launchable_packages
    from artemis_cli.device.apps import resolve_app
    from artemis_cli.device.select import resolve_device

    dev = resolve_device(device, backend="adb")  # the shell is all this needs
    try:
        serial = dev.info().serial
        packages = installed_packages(dev)
        launchable = launchable_packages(dev)
        if not names:
            _list(serial, launchable if launchable is not None else packages, launchable is not None, as_json,
                  plain)
            return
        results = [resolve_app(name, packages, launchable=launchable) for name in names]
    finally:
        dev.close()
    if as_json:
        print(json.dumps({"device": serial, "installed": len(packages),
                          "results": [r.as_dict() for r in results]}, ensure_ascii=False, indent=2))
        return
    from artemis_cli.cli.tables import wants_plain

    plain = wants_plain(plain)
    for r in results:
        also = ", ".join(r.candidates)
        if plain:
            print("\t".join([r.query, r.package or "-", r.how if r.package else "not-installed", also]))
        elif r.package:
            line = f"{r.query} → {r.package} ({r.how})"
            print(line + (f"; also: {also}" if also else ""))
        else:
            what = "nothing like it; the launchable apps" if r.listing else "similar"
            print(f"{r.query}: not installed" + (f"; {what}: {also}" if also else ""))


def _list(serial: str, packages: list[str], launchable: bool, as_json: bool, plain: bool = False) -> None:
    rows: list[dict[str, Any]] = [{"package": p, "label": None} for p in packages]
    if as_json:
        print(json.dumps({"device": serial, "launchable": launchable, "apps": rows}, ensure_ascii=False, indent=2))
        return
    from artemis_cli.cli.console import out
    from artemis_cli.cli.tables import Column, FitTable, print_table, wants_plain

    table = FitTable.listing([Column("package", "id")])  # no backend gives labels yet (device/apps.py)
    for row in rows:
        table.add_row(row["package"])
    print_table(table, plain=plain)
    if wants_plain(plain):
        return
    console = out()
    what = "launchable apps" if launchable else "packages (this device cannot list launcher activities)"
    console.print(f"{len(rows)} {what} on {serial}", markup=False)
