"""Every knob, from the environment (names in the contract) and the bot's TOML file under `configs/`."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar
from urllib.parse import quote, urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine.url import make_url
from sqlalchemy.exc import ArgumentError

from bot.csb.child_env import ChildEnvConfig, child_environ
from bot.csb.docker_daemon import PING_TIMEOUT_SEC
from bot.csb.harbor_run import LaunchConfig
from bot.csb.usage_cache import USAGE_CACHE
from bot.default_paths import DEFAULT_CONFIG, DEFAULT_DATABASE, EXAMPLE_BENCH, PROJECT_ROOT
from bot.domain.errors import InfraError
from bot.domain.policy import PolicyConfig
from bot.domain.promotion import PromoteConfig
from bot.executors.base import ExecutorSettings
from bot.executors.registry import (
    EXECUTORS,
    AnyExecutorSettings,
    environment_variables,
    executor_settings,
)

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
    # After a restart or a takeover, a running lane claimed this recently and not found is looked for again
    # at the next tick rather than queued again: its process may be forked and not yet exec'ed (unmarked).
    # Such a lane waits the grace out before it runs again; the tests that kill bots shorten it.
    spawn_grace_sec: float = Field(default=10, gt=0)
    # How long one of CSB's preflight scripts may take before it is stopped and the request told so.
    preflight_timeout_sec: float = Field(default=60, gt=0)
    # How long the Docker daemon may take to answer its ping (card and `csb-bot check`): CSB's
    # `timeout 10 docker info`, never longer; shorter for a quicker verdict (the tests' silent daemon).
    docker_ping_sec: float = Field(default=PING_TIMEOUT_SEC, gt=0, le=PING_TIMEOUT_SEC)
    # Task ids `/csb run --tasks` takes at once: a quick rerun of a few tasks; more belong in a suite
    # or a selection file, whose card is reviewed as one.
    quick_rerun_max_tasks: int = Field(default=20, ge=1, le=1000)
    # CSB's usage cache (fetch_usage.py's; `~` is the bot's HOME): older than `usage_stale_sec` it is shown
    # as stale and not used. A new lane avoids an account whose 5-hour or 7-day utilisation (percent) is
    # at or above `max_utilization`; 100 never avoids one for its utilisation.
    usage_cache: str = USAGE_CACHE
    usage_stale_sec: float = Field(default=3600, gt=0)
    max_utilization: float = Field(default=95, gt=0, le=100)
    # The stall watchdog: a running lane whose log and trial folder have not changed for this long gets
    # one note with Stop and retry; a lane past `long_lane_share` of its time limit is named on its card.
    stall_after_sec: float = Field(default=30 * 60, gt=0)
    long_lane_share: float = Field(default=0.8, gt=0, le=1)


class NotifierConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tick_seconds: float = Field(default=0.5, gt=0)
    max_attempts: int = Field(default=12, ge=1)
    max_backoff_seconds: float = Field(default=60, gt=0)
    card_update_seconds: float = Field(default=3, ge=0)
    updates_per_minute: int = Field(default=45, ge=1)
    post_interval_seconds: float = Field(default=1, ge=0)
    # A finished run's report flags its line against official with ⚠ when it has more regressions than
    # fixes and McNemar's exact p is below this.
    regression_alpha: float = Field(default=0.05, gt=0, lt=1)
    # Sent outbox rows older than this are deleted by the timer holder (`bot/engine/outbox_pruner.py`);
    # rows not yet sent, set aside, or remembering a message that goes once ever are kept.
    keep_sent_days: float = Field(default=30, gt=0)


class ServerConfig(BaseModel):
    """The HTTP server's limits: Slack sends a request in milliseconds, so slower clients are cut off."""

    model_config = ConfigDict(extra="forbid")

    max_connections: int = Field(default=256, ge=1)
    header_timeout_sec: float = Field(default=15, gt=0)
    body_timeout_sec: float = Field(default=15, gt=0)


class ExecutorSection(BaseModel):
    """The `[executor]` section: `kind` picks where lanes run (CSB_EXECUTOR wins over it), and each
    executor's own settings are its table, `[executor.<kind>]`, checked by that executor's settings
    model. A flat `<kind>_<key>` (the section's former layout, e.g. `ray_address`) still reads as
    `<key>` of `[executor.<kind>]`."""

    model_config = ConfigDict(extra="forbid")

    TABLES: ClassVar[str] = "tables"

    kind: str = "local"
    tables: dict[str, AnyExecutorSettings] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _tables_by_kind(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        tables: dict[str, dict[str, Any]] = {}
        rest: dict[str, Any] = {}
        for key, value in data.items():
            prefix, _, field = key.partition("_")
            if key == cls.TABLES and isinstance(value, dict):  # already by kind (a dumped section)
                for kind, table in value.items():
                    tables.setdefault(kind, {}).update(table)
            elif key in EXECUTORS and isinstance(value, dict):
                tables.setdefault(key, {}).update(value)
            elif prefix in EXECUTORS and field:
                tables.setdefault(prefix, {}).setdefault(field, value)
            else:
                rest[key] = value  # `kind`, or a key the section refuses
        return rest | {cls.TABLES: {kind: values | {"kind": kind} for kind, values in tables.items()}}

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        return _executor_kind(kind)


def _executor_kind(kind: str) -> str:
    if kind not in EXECUTORS:
        raise PydanticCustomError("literal_error", "Input should be {kinds}", {"kinds": _KINDS})
    return kind


_KINDS = " or ".join(f"'{kind}'" for kind in EXECUTORS)


class BotConfig(BaseModel):
    """The `configs/csb-bot.toml` file."""

    model_config = ConfigDict(extra="forbid")

    executor: ExecutorSection = ExecutorSection()
    engine: EngineConfig = EngineConfig()
    notifier: NotifierConfig = NotifierConfig()
    server: ServerConfig = ServerConfig()
    policy: PolicyConfig = PolicyConfig()
    child_env: ChildEnvConfig = ChildEnvConfig()
    promote: PromoteConfig = PromoteConfig()


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


_EXECUTOR_VARIABLES = "executor_variables"  # its errors name their variables themselves


class Settings(DatabaseSettings):
    slack_bot_token: SecretStr
    slack_signing_secret: SecretStr
    slack_app_token: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"
    csb_repo: Path = EXAMPLE_BENCH
    csb_config: Path = DEFAULT_CONFIG
    csb_harbor: str = "harbor"
    csb_executor: str | None = None
    # Each executor's own variables (CSB_RAY_ADDRESS, ...: `ENV` of its settings), checked by its
    # settings model: kind → field → value, blank ones left out. Not in the repr: a token may be here.
    executor_variables: dict[str, dict[str, Any]] = Field(default_factory=dict, repr=False)

    @field_validator("csb_executor", mode="before")
    @classmethod
    def _blank_executor_is_unset(cls, kind: Any) -> Any:
        """`CSB_EXECUTOR=` means unset, as for every variable: the config file's choice, else local."""
        return None if isinstance(kind, str) and not kind.strip() else kind

    @field_validator("csb_executor")
    @classmethod
    def _known_executor(cls, kind: str | None) -> str | None:
        return None if kind is None else _executor_kind(kind)

    @model_validator(mode="before")
    @classmethod
    def _executors_variables(cls, data: Any) -> Any:
        """Every executor's variables, from the overrides or else the environment: the names are the
        executors' own, so they are gathered here rather than declared as fields."""
        if not isinstance(data, dict):
            return data
        names = environment_variables()
        given = {**_named(os.environ, names), **_named(data, names)}
        found: dict[str, dict[str, Any]] = {}
        for variable, value in given.items():
            kind, field = names[variable]
            found.setdefault(kind, {})[field] = value
        kept = {key: value for key, value in data.items() if key.upper() not in names}
        return kept | {_EXECUTOR_VARIABLES: found}

    @field_validator(_EXECUTOR_VARIABLES)
    @classmethod
    def _check_executors_variables(cls, found: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Each checked now by its executor's settings, so a wrong one is refused at start, by its name,
        as every other variable is."""
        return {kind: _checked_variables(kind, values) for kind, values in found.items()}

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

    def secret_values(self, config: BotConfig | None = None) -> list[str]:
        """Every secret the bot holds, so text leaving it (CSB's scripts, Harbor's logs, `check`) can be
        redacted: the secret settings, the database password, a password in the Ray head's URL, and
        the `[executor]` section's token and address."""
        values = [getattr(self, name) for name in type(self).model_fields]
        variables = [value for fields in self.executor_variables.values() for value in fields.values()]
        if config is not None:
            variables += [
                getattr(table, name, None)
                for table in config.executor.tables.values()
                for name in ("token", "address")
            ]
        found = [value.get_secret_value() for value in values + variables if isinstance(value, SecretStr)]
        found += _url_password(self.csb_database_url)
        found += [word for value in variables if isinstance(value, str) for word in _url_password(value)]
        return found

    def executor(self, config: BotConfig) -> ExecutorSettings:
        """Where lanes run: CSB_EXECUTOR wins over the section's `kind`, and each of the chosen
        executor's variables over its key in `[executor.<kind>]`. Settings that cannot run lanes (Ray
        without an address) are an InfraError naming both places."""
        kind = self.csb_executor or config.executor.kind
        table = config.executor.tables.get(kind)
        from_file = table.model_dump(exclude_unset=True) if table is not None else {}
        try:
            settings = executor_settings(from_file | self.executor_variables.get(kind, {}) | {"kind": kind})
        except ValidationError as exc:
            raise InfraError(f"[executor.{kind}] is invalid: {_config_errors(exc)}") from None
        problem = settings.unusable()
        if problem is not None:
            raise InfraError(problem)
        return settings

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
        Harbor with it, so both mean the same command. `environ` is the bot's own environment; every
        child process starts from its allow-listed part (`[child_env]`), never the bot's settings."""
        return LaunchConfig(
            repo=self.resolved_repo(),
            harbor=self.resolved_harbor(),
            base_env=child_environ(environ, config.child_env),
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


def _url_password(url: str | None) -> list[str]:
    """The password in a URL, decoded and as written (percent-encoded), so either form is redacted."""
    if not url:
        return []
    try:
        password = make_url(url).password
    except ArgumentError:
        password = urlsplit(url).password
    written = urlsplit(url).password
    return [value for value in {password, written, quote(password or "", safe="")} if value]


def _named(values: Mapping[str, Any], names: Mapping[str, object]) -> dict[str, Any]:
    """The entries of `values` that are among `names`, matched as the environment is: ignoring case."""
    return {key.upper(): value for key, value in values.items() if key.upper() in names}


def _checked_variables(kind: str, values: dict[str, Any]) -> dict[str, Any]:
    """One executor's variables through its settings model: the set ones as it reads them (blank:
    unset), or each problem by its variable's name, never its value."""
    model = EXECUTORS[kind].settings
    try:
        checked = model.model_validate(values | {"kind": kind})
    except ValidationError as exc:
        problems = "; ".join(f"{model.ENV[str(err['loc'][0])]}: {err['msg']}" for err in exc.errors())
        raise PydanticCustomError("executor_variable", "{problems}", {"problems": problems}) from None
    read = {field: getattr(checked, field) for field in values}
    return {field: value for field, value in read.items() if value is not None}


def _config_errors(exc: ValidationError) -> str:
    """Every error by its dotted key and message, never the value (pydantic's own text shows it)."""
    return "; ".join(f"{_file_key(err['loc']) or 'file'}: {err['msg']}" for err in exc.errors())


def _file_key(loc: tuple[int | str, ...]) -> str:
    """The key as the file writes it: `executor.ray.address`, not the path through the section's model
    (`executor.tables.ray.ray.address`: its `tables` field, then the kind its union is told apart by)."""
    keys: list[str] = []
    for part in map(str, loc):
        if part != ExecutorSection.TABLES and not (keys[-1:] == [part] and keys[-2:-1] == ["executor"]):
            keys.append(part)
    return ".".join(keys)


def _variable(loc: tuple[int | str, ...]) -> str:
    """The variable an error is about, as a prefix; none for one that names its variables itself."""
    return f"{str(loc[0]).upper()}: " if loc and loc[0] != _EXECUTOR_VARIABLES else ""


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
    invalid = [f"{_variable(e['loc'])}{e['msg']}" for e in errors if e["type"] != "missing"]
    return missing, invalid
