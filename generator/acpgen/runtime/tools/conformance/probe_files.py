"""The probe agent's step for a client's file system (where the build has ``fs/*``
and the client advertised them, and only there): ``fs/write_text_file`` and
``fs/read_text_file`` in a temporary folder the probe creates under the session's
``cwd`` (``.acp-conformance-*``). It removes the files it wrote or asked the client
to write, then the folder if it is empty, and touches nothing else."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from typing import Any

from .kit import ProbeStep
from .probe_agent import Probe
from .registry import CheckSpec

ORDER = 10
FS_READ, FS_WRITE = "fs/read_text_file", "fs/write_text_file"
METHODS = (FS_READ, FS_WRITE)
CHECKS = (
    CheckSpec(
        "client.fs-read", ("client",), judges=("ACP-CLIENT-FS-001",), honors=(FS_READ,)
    ),
    CheckSpec(
        "client.fs-write",
        ("client",),
        judges=("ACP-CLIENT-FS-002",),
        honors=(FS_WRITE,),
    ),
)
FILE_TEXT = "line one\nline two é\nline three\n"
"""What the probe writes (and asks the client to write): multi-line, non-ASCII."""
FOLDER_PREFIX = ".acp-conformance-"


def files(probe: Probe, session: str) -> None:
    raw = probe.client.get("fs")
    fs: dict[str, Any] = raw if isinstance(raw, dict) else {}
    read = fs.get("readTextFile") is True
    write = fs.get("writeTextFile") is True
    if not read:
        probe.check(
            "ACP-CLIENT-FS-001",
            "SKIPPED",
            "the client did not advertise fs.readTextFile: the probe did not call "
            "fs/read_text_file",
        )
    if not write:
        probe.check(
            "ACP-CLIENT-FS-002",
            "SKIPPED",
            "the client did not advertise fs.writeTextFile: the probe did not call "
            "fs/write_text_file",
        )
    if not (read or write):
        return
    root = probe.cwds.get(session, os.getcwd())
    try:
        folder = tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir=root)
    except OSError as error:
        for rid, on in (("ACP-CLIENT-FS-001", read), ("ACP-CLIENT-FS-002", write)):
            if on:
                probe.check(
                    rid, "SKIPPED", f"no temporary folder under {root}: {error}"
                )
        return
    ours: list[str] = []
    try:
        written = _write(probe, session, folder, ours) if write else False
        if read:
            _read_back(probe, session, folder, ours, written)
    finally:
        for path in ours:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
        try:
            os.rmdir(folder)
        except OSError:
            sys.stderr.write(
                f"conformance probe: left {folder}: it holds files the probe did "
                "not write\n"
            )


def _write(probe: Probe, session: str, folder: str, ours: list[str]) -> bool:
    path = os.path.join(folder, "written.txt")
    ours.append(path)
    answer = probe.call(session, FS_WRITE, {"path": path, "content": FILE_TEXT})
    _, why = probe.read(FS_WRITE, answer)
    if why:
        probe.check("ACP-CLIENT-FS-002", "FAIL", why)
        return False
    try:
        with open(path, encoding="utf-8", newline="") as file:
            found = file.read()
    except (OSError, UnicodeDecodeError) as error:
        probe.check(
            "ACP-CLIENT-FS-002",
            "FAIL",
            f"fs/write_text_file answered success, but {path} cannot be read: {error}",
        )
        return False
    ok = found == FILE_TEXT
    probe.check(
        "ACP-CLIENT-FS-002",
        "PASS" if ok else "FAIL",
        "" if ok else f"{path} holds {found!r}, not the {FILE_TEXT!r} sent",
    )
    return ok


def _read_back(
    probe: Probe, session: str, folder: str, ours: list[str], written: bool
) -> None:
    path = os.path.join(folder, "read.txt")
    ours.append(path)
    with open(path, "w", encoding="utf-8", newline="") as file:
        file.write(FILE_TEXT)
    asks: list[tuple[dict[str, Any], tuple[str, ...], str]] = [
        ({"path": path}, (FILE_TEXT,), "ACP-CLIENT-FS-001")
    ]
    window = FILE_TEXT.splitlines(keepends=True)[1]
    asks.append(
        (
            {"path": path, "line": 2, "limit": 1},
            (window, window.rstrip("\n")),
            "ACP-CLIENT-FS-001",
        )
    )
    if written:  # write, then read: the round trip
        back = os.path.join(folder, "written.txt")
        asks.append(({"path": back}, (FILE_TEXT,), "ACP-CLIENT-FS-002"))
    for params, expected, rid in asks:
        result, why = probe.read(FS_READ, probe.call(session, FS_READ, params))
        if why:  # a read that fails is the read's failure, round trip or not
            probe.check("ACP-CLIENT-FS-001", "FAIL", why)
            continue
        content = result.get("content") if isinstance(result, dict) else None
        ok = content in expected
        probe.check(
            rid,
            "PASS" if ok else "FAIL",
            ""
            if ok
            else f"fs/read_text_file {params} gave {content!r}, "
            f"expected {expected[0]!r}",
        )


STEPS = (ProbeStep("files", files),)
