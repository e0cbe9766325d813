"""`/ui/admissions` for a stdio server's pinned command: the changed file's digests, and two approvals.

The server's command is a real shell script, pinned at its first start; the script is changed on disk
and the server restarted: it is held `unadmitted` and its `@command` waits on the page with the digest
diff. Two administrators approve it through the page's forms (the same one twice is refused), and the
server starts with the changed command.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from colonnade.adapters.command_digest import file_sha256
from colonnade.runtime.tool_admission import COMMAND_KEY
from tests.support.governed import Governed, governed_gateway
from tests.support.machine_load import patient
from tests.support.mcp_servers import ROOT
from tests.support.page_login import csrf_token, person

pytestmark = pytest.mark.e2e

HOSTILE = ROOT / "tests" / "support" / "hostile_server.py"


def script(path: Path, note: str = "") -> None:
    path.write_text(f'#!/bin/sh\n{note}\nexec "{sys.executable}" "{HOSTILE}"\n')
    path.chmod(0o755)


def state(governed: Governed) -> str:
    return next(s["state"] for s in governed.running.gateway.servers.status() if s["name"] == "pinned")


def until(check: Callable[[], bool], what: str, governed: Governed) -> None:
    deadline = time.monotonic() + patient(30)
    while not check():
        assert time.monotonic() < deadline, f"{what}: {governed.running.gateway.servers.status()}"
        time.sleep(0.05)


def test_two_administrators_admit_a_changed_command_on_the_page(tmp_path: Path) -> None:
    command = tmp_path / "server.sh"
    script(command)
    first = file_sha256(command)
    entry = {"name": "pinned", "transport": "stdio", "command": str(command), "pin_command": {}}
    with governed_gateway(tmp_path, server={"admin_api": True}, servers=[entry]) as governed:
        until(lambda: state(governed) == "ready", "started", governed)
        script(command, note="# changed on disk")
        governed.running.run(governed.running.gateway.servers.restart("pinned"))
        until(lambda: state(governed) == "unadmitted", "held unadmitted", governed)

        path = "/ui/admissions/pinned/%40command/admit"
        with person(governed, "bob") as bob, person(governed, "carol") as carol:
            page = bob.get("/ui/admissions")
            found = re.search(
                rf'<section class="admission" data-server="pinned" data-tool="{COMMAND_KEY}".*?</section>',
                page.text,
                re.S,
            )
            assert found is not None, page.text
            shown = found.group(0)
            assert "kind-command" in shown and path in shown
            assert f"-executable: {command} sha256:{first}" in shown
            assert f"+executable: {command} sha256:{file_sha256(command)}" in shown

            counted = bob.post(path, data={"csrf_token": csrf_token(page.text)})
            assert counted.status_code == 303 and counted.headers["location"] == "/ui/admissions?done=counted"
            again = bob.post(path, data={"csrf_token": csrf_token(bob.get("/ui/admissions").text)})
            assert again.status_code == 409 and "A-AUTH-ADMISSION-SELF" in again.text
            assert state(governed) == "unadmitted"
            admitted = carol.post(path, data={"csrf_token": csrf_token(carol.get("/ui/admissions").text)})
            assert admitted.status_code == 303, admitted.text
        until(lambda: state(governed) == "ready", "started after the page's admission", governed)
        pinned = governed.running.gateway.servers.admission_of("pinned")["pinned"][COMMAND_KEY]
        assert pinned["admitted_by"] == ["user:bob", "user:carol"]
