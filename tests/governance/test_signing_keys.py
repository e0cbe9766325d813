"""The gateway's signing keys as a ring: an approval token signed before a rotation still verifies
inside the overlap and not after it (injected clock), the JWKS publishes both kids meanwhile,
another process's rotation is picked up from the file, and the one-JWK file of before still reads."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

import pytest
from joserfc.jwk import ECKey

from colonnade.calls.approvals.signing import ApprovalClaims, ApprovalSigner, BadToken
from colonnade.governance.identity.dev_issuer import DevIssuer
from colonnade.governance.identity.signing_keys import SigningKeyError, SigningKeyFile
from colonnade.runtime.governance import dev_issuer_keys

OVERLAP_S = 600.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _claims() -> ApprovalClaims:
    return ApprovalClaims(
        "ap-1", "acme:crm:drop", "1.0.0", "0" * 64, "acme", "user:bob", "user:ann", None, 1, 2
    )


def test_a_token_signed_before_rotation_verifies_within_the_overlap_only(tmp_path: Path) -> None:
    clock = Clock()
    keys = SigningKeyFile(tmp_path / "approval.jwk", overlap_s=OVERLAP_S, clock=clock)
    signer = ApprovalSigner(keys, clock=clock)
    before = signer.sign(_claims())
    old_kid = signer.key.kid
    keys.rotate()
    new_kid = signer.key.kid
    assert new_kid != old_kid
    after = signer.sign(_claims())
    assert json.loads(_header(after))["kid"] == new_kid
    assert {key["kid"] for key in signer.public_jwks()["keys"]} == {old_kid, new_kid}
    assert all("d" not in key for key in signer.public_jwks()["keys"])  # public halves only
    clock.now += OVERLAP_S - 1
    assert signer.verify(before).approval_id == "ap-1"
    clock.now += 1
    with pytest.raises(BadToken):
        signer.verify(before)
    assert signer.verify(after).approval_id == "ap-1"
    assert [key["kid"] for key in signer.public_jwks()["keys"]] == [new_kid]


def test_another_process_rotating_the_file_reaches_a_running_signer(tmp_path: Path) -> None:
    path = tmp_path / "approval.jwk"
    running = ApprovalSigner.load_or_create(path)
    token = running.sign(_claims())
    SigningKeyFile(path, overlap_s=OVERLAP_S).rotate()  # what `colonnade keys rotate-signing` does
    assert running.key.kid != json.loads(_header(token))["kid"]
    assert running.verify(token).tool == "acme:crm:drop"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_rotation_drops_keys_whose_overlap_ended(tmp_path: Path) -> None:
    clock = Clock()
    keys = SigningKeyFile(tmp_path / "k.jwk", overlap_s=OVERLAP_S, clock=clock)
    keys.rotate()
    clock.now += OVERLAP_S + 1
    _, after = keys.rotate()
    assert len(after.keys) == 2  # the current key and the one it just replaced


def test_the_single_jwk_file_of_before_reads_as_a_ring_of_one(tmp_path: Path) -> None:
    path = tmp_path / "dev-issuer.jwk"
    key = ECKey.generate_key("P-256", auto_kid=True)
    path.write_text(json.dumps(key.as_dict(private=True)), encoding="utf-8")
    issuer = DevIssuer.load_or_create(tmp_path)
    assert issuer.key.kid == key.kid
    issuer.keys.rotate()
    assert {jwk["kid"] for jwk in issuer.public_jwks()} == {key.kid, issuer.key.kid}


def test_a_broken_key_file_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "approval.jwk"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(SigningKeyError, match="move it away"):
        ApprovalSigner.load_or_create(path)


def _header(token: str) -> str:
    part = token.split(".")[0]
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode()


async def test_the_gateway_reads_the_dev_issuers_keys_as_they_rotate(tmp_path: Path) -> None:
    dev = DevIssuer.load_or_create(tmp_path, overlap_s=OVERLAP_S)
    keys = dev_issuer_keys(dev)
    old = dev.key.kid
    assert await keys.key_for(old, "ES256") is not None
    SigningKeyFile(dev.keys.path, overlap_s=OVERLAP_S).rotate()  # another process rotates
    new = dev.key.kid
    assert new != old
    assert await keys.key_for(new, "ES256") is not None  # an unknown kid reads the ring again
    assert await keys.key_for(old, "ES256") is not None  # the old key inside its overlap
    assert await keys.key_for("made-up", "ES256") is None
