"""`bench/federation_overhead.py --peer` measures a peer proxy only from its own venv at the pinned
version, and says how to install it otherwise: the benchmark never installs anything, and a number
quoted for a peer names the release measured. No network here and no peer installed: the venvs are
made by hand with the metadata a pip install leaves.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import peers
from federation_overhead import Era, parse_arguments, peer_ratios


def _peer_in(monkeypatch: pytest.MonkeyPatch, folder: Path, version: str | None) -> peers.Peer:
    """The FastMCP peer with its venv under `folder`; with `version`, a venv that holds that release."""
    peer = replace(peers.PEERS["fastmcp"], folder=folder)
    monkeypatch.setitem(peers.PEERS, "fastmcp", peer)
    if version is not None:
        peer.python.parent.mkdir(parents=True)
        os.symlink(sys.executable, peer.python)
        dist = peer.venv / "lib" / "python3.11" / "site-packages" / f"fastmcp-{version}.dist-info"
        dist.mkdir(parents=True)
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fastmcp\nVersion: {version}\n")
    return peer


def test_the_peer_option_parses_when_the_pinned_version_is_installed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    peer = _peer_in(monkeypatch, tmp_path, peers.PEERS["fastmcp"].version)
    arguments = parse_arguments(["--calls", "10", "--rounds", "1", "--peer", "fastmcp"])
    assert arguments.peer == peer
    assert peer.command(4242, "http://127.0.0.1:1/mcp")[:2] == [str(peer.python), str(peer.server)]
    assert parse_arguments([]).peer is None


def test_a_missing_peer_venv_is_refused_with_the_install_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _peer_in(monkeypatch, tmp_path, None)
    with pytest.raises(SystemExit) as exit_:
        parse_arguments(["--peer", "fastmcp"])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert "is not installed" in error
    assert ".venv/bin/python bench/peers.py install fastmcp" in error
    assert peers.main(["check", "fastmcp"]) == 1


def test_another_version_in_the_peer_venv_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    peer = _peer_in(monkeypatch, tmp_path, "4.0.0")
    with pytest.raises(peers.PeerMissing, match=rf"is 4\.0\.0, not the pinned {peer.version}"):
        peers.require(peer)


def test_an_unknown_peer_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_arguments(["--peer", "nope"])
    assert "invalid choice: 'nope'" in capsys.readouterr().err


def test_the_ratio_to_the_peer_is_paired_per_round() -> None:
    era = Era(
        rows=[], added={}, cpu={"(b)": [1.0, 3.0, 2.0], "(c)": [2.0, 2.0, 2.0], "(p)": [4.0, 4.0, 10.0]}
    )
    assert peer_ratios(era) == {"(b)": 0.25, "(c)": 0.5}
    assert peer_ratios(Era(rows=[], added={}, cpu={"(b)": [1.0]})) == {}
