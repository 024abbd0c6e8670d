"""The bot scopes `manifest.yml` asks for, so `csb-bot check` can name the ones a token was not granted."""

from __future__ import annotations

BOT_SCOPES = (
    "commands",
    "chat:write",
    "chat:write.public",
    "users:read",
    "usergroups:read",
    "im:write",
    "files:write",
    "channels:history",
    "groups:history",
)
GRANTED_SCOPES_HEADER = "x-oauth-scopes"  # Slack names a token's granted scopes in this response header
