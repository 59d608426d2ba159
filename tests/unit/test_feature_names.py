"""Feature names follow upstream (issue 23, item 6): each feature of ``schema/unstable-features.json``
is a cargo feature of the protocol's Rust crates without its ``unstable_`` prefix, or says under
``rationale`` why it exists without one. The upstream names checked against are kept in the
repository, ``schema/upstream-features.json``, with the crate, version and place each list was read
from; nothing is fetched here."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT / "schema" / "upstream-features.json"
MANIFEST = ROOT / "schema" / "unstable-features.json"
PREFIX = "unstable_"


def _upstream() -> dict[str, Any]:
    return json.loads(UPSTREAM.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _names() -> set[str]:
    return {name for source in _upstream()["sources"] for name in source["features"]}


def _features() -> dict[str, Any]:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))["features"]  # type: ignore[no-any-return]


def test_each_source_of_upstream_names_says_which_crate_version_and_where() -> None:
    sources = _upstream()["sources"]
    assert sources
    for source in sources:
        assert set(source) == {"crate", "version", "where", "features"}
        assert source["crate"].startswith("agent-client-protocol")
        assert re.fullmatch(r"\d+\.\d+\.\d+", source["version"])
        assert source["where"].strip()
        assert source["features"] == sorted(set(source["features"]))
        assert all(re.fullmatch(r"unstable_[a-z0-9_]+", name) for name in source["features"])


def test_every_feature_is_named_after_an_upstream_cargo_feature_or_says_why_not() -> None:
    upstream = _names()
    unexplained, needless = [], []
    for name, feature in _features().items():
        has_upstream = PREFIX + name in upstream
        if not has_upstream and not feature.get("rationale"):
            unexplained.append(name)
        if has_upstream and "rationale" in feature:
            needless.append(name)
    assert not unexplained, f"neither an upstream cargo feature nor a rationale: {unexplained}"
    assert not needless, f"a rationale although upstream has the feature: {needless}"


def test_no_feature_keeps_a_name_upstream_spells_otherwise() -> None:
    """``session_title`` was ``unstable_session_set_title`` upstream: a feature whose name is a
    shortening of an upstream name it does not use is a misnaming."""
    upstream = {name.removeprefix(PREFIX) for name in _names()}
    for name in _features():
        if name in upstream:
            continue
        words = set(name.split("_"))
        close = [other for other in upstream if words < set(other.split("_"))]
        assert not close, f"feature {name} looks like upstream's {close}"


def test_the_features_command_shows_the_rationale() -> None:
    from acpgen.commands import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["--config", str(ROOT / "pyproject.toml"), "features", "--format", "json"]) == 0
    listed = {f["name"]: f["rationale"] for f in json.loads(buffer.getvalue())["features"]}
    assert listed == {name: feature.get("rationale") for name, feature in _features().items()}
