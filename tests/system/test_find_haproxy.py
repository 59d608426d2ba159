"""The HAProxy lookup of ``make deploy-deps`` and the deployment tests (issue 32).

``tests/support/find_haproxy.py`` decides for both: ``HAPROXY`` (a path or a command), else haproxy on
PATH or in the sbin folders; without one, ``--install`` installs Debian's haproxy only where
apt-get exists and it runs as root, and otherwise prints the line the skipped tests report.
Fake executables on a PATH of their own; the fake apt-get records its arguments and never
touches the system.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support import find_haproxy
from tests.support.find_haproxy import Found, Missing, Wrong, find

ROOTED = hasattr(os, "geteuid") and os.geteuid() == 0


def executable(folder: Path, name: str, body: str = "#!/bin/sh\nexit 0\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(body, encoding="utf-8")
    path.chmod(0o755)
    return path


def test_haproxy_wins_over_what_is_on_path(tmp_path: Path) -> None:
    mine = executable(tmp_path / "opt", "my-haproxy")
    executable(tmp_path / "bin", "haproxy")
    assert find({"HAPROXY": str(mine), "PATH": str(tmp_path / "bin")}, ()) == Found(str(mine))


@pytest.mark.parametrize("value", ["/nowhere/haproxy", "not-a-haproxy"])
def test_a_haproxy_naming_no_executable_is_an_error(tmp_path: Path, value: str) -> None:
    found = find({"HAPROXY": value, "PATH": str(tmp_path)}, ())
    assert isinstance(found, Wrong) and f"HAPROXY={value} names no executable file" in found.reason


def test_on_path_then_in_the_sbin_folders(tmp_path: Path) -> None:
    on_path = executable(tmp_path / "bin", "haproxy")
    in_sbin = executable(tmp_path / "sbin", "haproxy")
    assert find({"PATH": str(tmp_path / "bin")}, [str(tmp_path / "sbin")]) == Found(str(on_path))
    assert find({"PATH": str(tmp_path / "empty")}, [str(tmp_path / "sbin")]) == Found(str(in_sbin))


def test_without_haproxy_the_reason_says_how_to_enable_the_tests(tmp_path: Path) -> None:
    found = find({"PATH": str(tmp_path)}, ())
    assert isinstance(found, Missing)
    assert "deployment test is skipped" in found.reason and "HAPROXY=" in found.reason and "\n" not in found.reason


def test_install_runs_apt_get_only_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As root it installs (the fake apt-get puts a haproxy beside itself); as anyone else it runs
    nothing, prints the skip line and exits 0 (make goes on)."""
    bin_folder = tmp_path / "bin"
    log = tmp_path / "apt-get.log"
    body = (
        f"#!{sys.executable}\n"
        "import os, sys\n"
        f"open({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "if 'install' in sys.argv:\n"
        f"    path = {str(bin_folder / 'haproxy')!r}\n"
        "    open(path, 'w').write('#!/bin/sh\\n')\n"
        "    os.chmod(path, 0o755)\n"
    )
    executable(bin_folder, "apt-get", body)
    monkeypatch.setattr(find_haproxy, "SBIN", ())
    monkeypatch.setenv("PATH", str(bin_folder))
    monkeypatch.delenv("HAPROXY", raising=False)
    assert find_haproxy.main(["--install"]) == 0
    out = capsys.readouterr().out.splitlines()
    if ROOTED:
        assert log.read_text(encoding="utf-8").splitlines() == [
            "update -qq",
            "install -y -qq --no-install-recommends haproxy",
        ]
        assert "installing Debian's haproxy" in out[0] and out[-1] == str(bin_folder / "haproxy")
    else:
        assert not log.exists()
        assert out == [find().reason]  # type: ignore[union-attr]


@pytest.mark.skipif(not ROOTED, reason="only root runs apt-get, so only as root can it fail")
def test_a_failed_install_fails_make(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    executable(tmp_path / "bin", "apt-get", "#!/bin/sh\nexit 100\n")
    monkeypatch.setattr(find_haproxy, "SBIN", ())
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv("HAPROXY", raising=False)
    assert find_haproxy.main(["--install"]) == 1
    assert "find_haproxy: error: apt-get update -qq failed (exit 100)" in capsys.readouterr().err
