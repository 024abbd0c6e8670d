"""The `[executor.ray]` section: which Ray head runs the lanes, and how. Declared here once; the
environment variables named in `ENV` (the contract: CSB_RAY_ADDRESS, CSB_RAY_TOKEN,
CSB_RAY_LANE_RESOURCE) win over the file key by key."""

from __future__ import annotations

from typing import ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator

from bot.executors.base import ExecutorSettings

ADDRESS_SHAPE = "the head's dashboard URL, e.g. http://ray-head:8265"
# Ray refuses these as entrypoint_resources: they have entrypoint_num_cpus and its kind.
# Ray 2.60 reserves these names: a job asking for one of them as a custom resource is failed at once.
_RAY_BUILTIN_RESOURCES = frozenset({"CPU", "GPU", "memory", "object_store_memory", "bundle"})


class RaySettings(ExecutorSettings):
    """One Ray job per lane on an existing cluster: the head's dashboard URL (required), its optional
    token, the custom resource each lane's job asks one of (None: none), and how long a job may wait
    PENDING before it counts as an infrastructure failure."""

    ENV: ClassVar[dict[str, str]] = {
        "address": "CSB_RAY_ADDRESS",
        "token": "CSB_RAY_TOKEN",
        "lane_resource": "CSB_RAY_LANE_RESOURCE",
    }

    kind: Literal["ray"] = "ray"
    address: str | None = None
    token: SecretStr | None = None
    lane_resource: str | None = None
    pending_sec: float = Field(default=300, gt=0)

    @field_validator("address")
    @classmethod
    def _address_shape(cls, address: str | None) -> str | None:
        """An http(s) URL with a host, without its trailing slash; blank is unset."""
        if address is None or not address.strip():
            return None
        address = address.strip().rstrip("/")
        parts = urlsplit(address)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL; use {ADDRESS_SHAPE}")
        return address

    @field_validator("token")
    @classmethod
    def _blank_token_is_unset(cls, token: SecretStr | None) -> SecretStr | None:
        return None if token is None or not token.get_secret_value().strip() else token

    @field_validator("lane_resource")
    @classmethod
    def _resource_name(cls, name: str | None) -> str | None:
        """A custom resource the cluster's nodes offer (e.g. csb_slot); blank is unset."""
        if name is None or not name.strip():
            return None
        name = name.strip()
        if name in _RAY_BUILTIN_RESOURCES:
            raise ValueError(f"{name} is one of Ray's own resources; name a custom one, e.g. csb_slot")
        return name

    def unusable(self) -> str | None:
        if self.address is None:
            return (
                "the Ray executor needs the head's address: set CSB_RAY_ADDRESS or address in the "
                f"[executor.ray] section ({ADDRESS_SHAPE})"
            )
        return None
