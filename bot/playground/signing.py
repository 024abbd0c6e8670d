"""Slack's request signature (v0), computed exactly as Slack does so the bot's verifier is exercised."""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Slack-Signature"
TIMESTAMP_HEADER = "X-Slack-Request-Timestamp"


def slack_signature(signing_secret: str, timestamp: str, body: str) -> str:
    """`v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{raw body}` under the app's signing secret."""
    base = f"v0:{timestamp}:{body}".encode()
    return "v0=" + hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()


def signed_headers(signing_secret: str, timestamp: int, body: str) -> dict[str, str]:
    stamp = str(timestamp)
    return {TIMESTAMP_HEADER: stamp, SIGNATURE_HEADER: slack_signature(signing_secret, stamp, body)}
