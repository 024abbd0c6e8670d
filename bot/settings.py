"""Every knob, from the environment (names in the contract) and the bot's TOML file under `configs/`."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine.url import make_url
from sqlalchemy.exc import ArgumentError

from bot.csb.command import LaunchConfig
from bot.domain.errors import InfraError
from bot.domain.policy import PolicyConfig

PROJECT_ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_BENCH = PROJECT_ROOT / "configs" / "example-bench"
DEFAULT_CONFIG = PROJECT_ROOT / "configs" / "csb-bot.toml"
DEFAULT_DATABASE = PROJECT_ROOT / ".csb-bot" / "csb-bot.db"
SQLITE_DRIVERS = ("sqlite", "sqlite+aiosqlite")
POSTGRES_DRIVERS = ("postgresql", "postgresql+asyncpg", "postgres")
_POSTGRES_SHAPE = "postgresql+asyncpg://user:password@host:5432/database"
_DATABASE_SHAPES = f"sqlite:///path/to/file.db or {_POSTGRES_SHAPE}"
_TOKENS = {"slack_bot_token", "slack_signing_secret", "slack_app_token"}


class EngineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    default_parallel: int = Field(default=4, ge=1)
    tick_seconds: float = Field(default=0.5, gt=0)
    timeout_multiplier: int = Field(default=10, ge=1)
    default_lane_timeout_sec: int = Field(default=4 * 3600, ge=1)
    daytona: bool = False
    # The global slot pool shared by all runs; 0 = sessions_per_account x the account homes found,
    # else default_parallel.
    global_slots: int = Field(default=0, ge=0)
    sessions_per_account: int = Field(default=6, ge=1)  # CSB: SESSIONS_PER_ACCOUNT
    account_homes: str = "~/.claude-homes/account*"
    rate_limit_rest_sec: float = Field(default=300, ge=0)
    retry_limit: int = Field(default=3, ge=0)
    retry_backoff_sec: float = Field(default=30, ge=0)
    retry_backoff_cap_sec: float = Field(default=600, ge=0)
    infra_pause_rate: float = Field(default=0.5, gt=0, le=1)
    infra_pause_min_attempts: int = Field(default=6, ge=1)
    cancel_grace_sec: float = Field(default=30, ge=0)
    lease_ttl_sec: float = Field(default=20, gt=0)
    # How long one of CSB's preflight scripts may take before it is stopped and the request told so.
    preflight_timeout_sec: float = Field(default=60, gt=0)


class NotifierConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tick_seconds: float = Field(default=0.5, gt=0)
    max_attempts: int = Field(default=12, ge=1)
    max_backoff_seconds: float = Field(default=60, gt=0)
    card_update_seconds: float = Field(default=3, ge=0)
    updates_per_minute: int = Field(default=45, ge=1)
    post_interval_seconds: float = Field(default=1, ge=0)


class ServerConfig(BaseModel):
    """The HTTP server's limits: Slack sends a request in milliseconds, so slower clients are cut off."""

    model_config = ConfigDict(extra="forbid")

    max_connections: int = Field(default=256, ge=1)
    header_timeout_sec: float = Field(default=15, gt=0)
    body_timeout_sec: float = Field(default=15, gt=0)


ExecutorKind = Literal["local", "ray"]
_RAY_ADDRESS_SHAPE = "the head's dashboard URL, e.g. http://ray-head:8265"


def _ray_address_shape(address: str | None) -> str | None:
    """An http(s) URL with a host, without its trailing slash; blank is unset."""
    if address is None or not address.strip():
        return None
    address = address.strip().rstrip("/")
    parts = urlsplit(address)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL; use {_RAY_ADDRESS_SHAPE}")
    return address


# Ray refuses these as entrypoint_resources: they have entrypoint_num_cpus and its kind.
# Ray 2.60 reserves these names: a job asking for one of them as a custom resource is failed at once.
_RAY_BUILTIN_RESOURCES = frozenset({"CPU", "GPU", "memory", "object_store_memory", "bundle"})


def _ray_resource_name(name: str | None) -> str | None:
    """A custom resource the cluster's nodes offer (e.g. csb_slot); blank is unset."""
    if name is None or not name.strip():
        return None
    name = name.strip()
    if name in _RAY_BUILTIN_RESOURCES:
        raise ValueError(f"{name} is one of Ray's own resources; name a custom one, e.g. csb_slot")
    return name


class ExecutorConfig(BaseModel):
    """The `[executor]` section: where lanes run. CSB_EXECUTOR, CSB_RAY_ADDRESS and CSB_RAY_TOKEN win."""

    model_config = ConfigDict(extra="forbid")

    kind: ExecutorKind = "local"
    ray_address: str | None = None
    ray_token: SecretStr | None = None
    ray_lane_resource: str | None = None
    ray_pending_sec: float = Field(default=300, gt=0)

    _address_shape = field_validator("ray_address")(_ray_address_shape)
    _resource_name = field_validator("ray_lane_resource")(_ray_resource_name)


class ExecutorChoice(BaseModel):
    """Where lanes run, the environment and the config file merged: `local`, or `ray` with the head's
    dashboard URL (always set then), its optional token, the custom resource each lane's job asks one
    of (None: none), and how long a job may wait PENDING before it counts as an infrastructure failure."""

    model_config = ConfigDict(frozen=True)

    kind: ExecutorKind
    ray_address: str | None = None
    ray_token: SecretStr | None = None
    ray_lane_resource: str | None = None
    ray_pending_sec: float = 300


class BotConfig(BaseModel):
    """The `configs/csb-bot.toml` file."""

    model_config = ConfigDict(extra="forbid")

    executor: ExecutorConfig = ExecutorConfig()
    engine: EngineConfig = EngineConfig()
    notifier: NotifierConfig = NotifierConfig()
    server: ServerConfig = ServerConfig()
    policy: PolicyConfig = PolicyConfig()


class DatabaseSettings(BaseSettings):
    """CSB_DATABASE_URL alone: what `csb-bot db` needs, without Slack's tokens."""

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    # Not in the settings' repr: a PostgreSQL URL may carry a password.
    csb_database_url: str = Field(default=f"sqlite+aiosqlite:///{DEFAULT_DATABASE}", repr=False)

    @field_validator("csb_database_url")
    @classmethod
    def _known_database(cls, url: str) -> str:
        """SQLite (the embedded default, one machine) or PostgreSQL through asyncpg (several replicas).
        Messages never repeat the URL: it may hold a password. Only the default SQLite folder is
        created: a missing other one is more likely a typo than a wish."""
        try:
            parsed = make_url(url)
        except ArgumentError:
            raise ValueError(f"not a database URL; use {_DATABASE_SHAPES}") from None
        if parsed.drivername not in SQLITE_DRIVERS + POSTGRES_DRIVERS:
            raise ValueError(f"use {_DATABASE_SHAPES}, not {parsed.drivername}")
        if parsed.drivername in POSTGRES_DRIVERS:
            if not parsed.host or not parsed.database:
                raise ValueError("a PostgreSQL URL names the host and the database: " + _POSTGRES_SHAPE)
            return url
        if parsed.database not in (None, "", ":memory:"):
            folder = Path(parsed.database).parent
            if folder.resolve() != DEFAULT_DATABASE.parent and not folder.is_dir():
                raise ValueError(f"the folder {folder} does not exist; create it or choose another path")
        return url

    def database_for_display(self) -> str:
        """CSB_DATABASE_URL as logs and `csb-bot check` may show it: the password masked."""
        return make_url(self.csb_database_url).render_as_string(hide_password=True)


_TOKEN_KINDS = {
    "xoxb-": "a bot token (xoxb-), which goes in SLACK_BOT_TOKEN",
    "xapp-": "an app-level token (xapp-), which goes in SLACK_APP_TOKEN and turns on Socket Mode",
    "xoxp-": "a user token (xoxp-), which the bot does not use",
}


def _token_kind(value: str) -> str:
    """What a token of the wrong kind is, by its prefix (never its value), so a swap is plain to see."""
    kind = next((kind for prefix, kind in _TOKEN_KINDS.items() if value.startswith(prefix)), None)
    return f"; this one is {kind}" if kind else ""


class Settings(DatabaseSettings):
    slack_bot_token: SecretStr
    slack_signing_secret: SecretStr
    slack_app_token: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"
    csb_repo: Path = EXAMPLE_BENCH
    csb_config: Path = DEFAULT_CONFIG
    csb_harbor: str = "harbor"
    csb_executor: ExecutorKind | None = None
    csb_ray_address: str | None = None
    csb_ray_token: SecretStr | None = None
    csb_ray_lane_resource: str | None = None

    _ray_address = field_validator("csb_ray_address")(_ray_address_shape)
    _ray_resource = field_validator("csb_ray_lane_resource")(_ray_resource_name)

    @field_validator("csb_executor", mode="before")
    @classmethod
    def _blank_executor_is_unset(cls, kind: Any) -> Any:
        """`CSB_EXECUTOR=` means unset, as for every variable: the config file's choice, else local."""
        return None if isinstance(kind, str) and not kind.strip() else kind

    @model_validator(mode="before")
    @classmethod
    def _empty_is_missing(cls, data: Any) -> Any:
        """`SLACK_BOT_TOKEN=` (say, an unfilled line of an env file) is reported as missing, not sent to
        Slack; an empty SLACK_APP_TOKEN means HTTP mode, as when it is unset."""
        if not isinstance(data, dict):
            return data
        return {
            key: value
            for key, value in data.items()
            if not (key.lower() in _TOKENS and isinstance(value, str) and not value.strip())
        }

    @field_validator("slack_bot_token")
    @classmethod
    def _bot_token_shape(cls, token: SecretStr) -> SecretStr:
        if not token.get_secret_value().startswith("xoxb-"):
            raise ValueError(
                "a bot token starts with xoxb- (OAuth & Permissions, Bot User OAuth Token)"
                + _token_kind(token.get_secret_value())
            )
        return token

    @field_validator("slack_app_token")
    @classmethod
    def _app_token_shape(cls, token: SecretStr | None) -> SecretStr | None:
        if token is not None and not token.get_secret_value().startswith("xapp-"):
            raise ValueError(
                "an app-level token starts with xapp- (Basic Information, App-Level Tokens)"
                + _token_kind(token.get_secret_value())
            )
        return token

    def secret_values(self) -> list[str]:
        """Every secret setting's value, so text from outside (CSB's scripts) can be redacted."""
        values = [getattr(self, name) for name in type(self).model_fields]
        return [value.get_secret_value() for value in values if isinstance(value, SecretStr)]

    def executor(self, config: BotConfig) -> ExecutorChoice:
        """Where lanes run: each of CSB_EXECUTOR, CSB_RAY_ADDRESS, CSB_RAY_TOKEN and CSB_RAY_LANE_RESOURCE
        wins over its key in the `[executor]` section. Ray without an address is an InfraError naming
        both places."""
        section = config.executor
        token = self.csb_ray_token if self.csb_ray_token is not None else section.ray_token
        if token is not None and not token.get_secret_value().strip():
            token = None
        choice = ExecutorChoice(
            kind=self.csb_executor or section.kind,
            ray_address=self.csb_ray_address or section.ray_address,
            ray_token=token,
            ray_lane_resource=self.csb_ray_lane_resource or section.ray_lane_resource,
            ray_pending_sec=section.ray_pending_sec,
        )
        if choice.kind == "ray" and choice.ray_address is None:
            raise InfraError(
                "the Ray executor needs the head's address: set CSB_RAY_ADDRESS or ray_address in the "
                f"[executor] section ({_RAY_ADDRESS_SHAPE})"
            )
        return choice

    def resolved_repo(self) -> Path:
        return _from_root(self.csb_repo)

    def resolved_harbor(self) -> str:
        """A bare name is looked up on PATH; a relative path is taken from the project root, not the cwd."""
        if "/" not in self.csb_harbor:
            return self.csb_harbor
        return str(_from_root(Path(self.csb_harbor)))

    def resolved_config_path(self) -> Path:
        return _from_root(self.csb_config)

    def launch_config(self, config: BotConfig, environ: Mapping[str, str]) -> LaunchConfig:
        """What every lane command of this deployment shares: `serve` launches with it, `check` probes
        Harbor with it, so both mean the same command."""
        return LaunchConfig(
            repo=self.resolved_repo(),
            harbor=self.resolved_harbor(),
            base_env=environ,
            timeout_multiplier=config.engine.timeout_multiplier,
            daytona=config.engine.daytona,
        )

    def load_config(self) -> BotConfig:
        """Read the TOML file. Only the default file may be absent (then every knob has its default): a
        CSB_CONFIG naming a missing file is a typo that would silently drop the policy."""
        path = self.resolved_config_path()
        if not path.exists():
            if "csb_config" not in self.model_fields_set:
                return BotConfig()
            raise InfraError(f"CSB_CONFIG names {path}, which does not exist (unset it for the defaults)")
        try:
            text = path.read_text()
        except OSError as exc:
            raise InfraError(f"CSB_CONFIG {path}: {exc.strerror or exc}") from None
        try:
            return BotConfig.model_validate(tomllib.loads(text))
        except tomllib.TOMLDecodeError as exc:
            raise InfraError(f"config file {path} is not valid TOML: {exc}") from None
        except ValidationError as exc:
            raise InfraError(f"config file {path} is invalid: {_config_errors(exc)}") from None


def _config_errors(exc: ValidationError) -> str:
    """Every error by its dotted key and message, never the value (pydantic's own text shows it)."""
    return "; ".join(f"{'.'.join(map(str, err['loc'])) or 'file'}: {err['msg']}" for err in exc.errors())


def _from_root(path: Path) -> Path:
    return path if path.is_absolute() else PROJECT_ROOT / path


_S = TypeVar("_S", bound=DatabaseSettings)


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment (`overrides` win over it); a missing token becomes one readable
    line, not a traceback."""
    return _load(Settings, **overrides)


def load_database_settings() -> DatabaseSettings:
    """CSB_DATABASE_URL only, for `csb-bot db`: an operator's migration step needs no Slack token."""
    return _load(DatabaseSettings)


def _load(kind: type[_S], **overrides: Any) -> _S:
    try:
        return kind(**overrides)
    except ValidationError as exc:
        missing, invalid = _settings_errors(exc)
        parts = [f"missing environment variable(s): {', '.join(missing)}"] if missing else []
        parts += [f"invalid settings: {'; '.join(invalid)}"] if invalid else []
        raise InfraError("; ".join(parts)) from None


def settings_problems(exc: ValidationError) -> list[str]:
    """Each settings error on its own line (for `csb-bot check`), by variable name, never by value."""
    missing, invalid = _settings_errors(exc)
    return [f"missing environment variable: {name}" for name in missing] + invalid


def _settings_errors(exc: ValidationError) -> tuple[list[str], list[str]]:
    errors = exc.errors()
    missing = [str(err["loc"][0]).upper() for err in errors if err["type"] == "missing"]
    # Each problem by variable name and message only: the value may hold a password or token.
    invalid = [f"{str(e['loc'][0]).upper()}: {e['msg']}" for e in errors if e["type"] != "missing"]
    return missing, invalid
