"""Every knob, from the environment (names in the contract) and the bot's TOML file under `configs/`."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine.url import make_url
from sqlalchemy.exc import ArgumentError

from bot.domain.errors import InfraError
from bot.domain.policy import PolicyConfig

PROJECT_ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_BENCH = PROJECT_ROOT / "configs" / "example-bench"
DEFAULT_CONFIG = PROJECT_ROOT / "configs" / "csb-bot.toml"
DEFAULT_DATABASE = PROJECT_ROOT / ".csb-bot" / "csb-bot.db"


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
    sessions_per_account: int = Field(default=4, ge=1)
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


class BotConfig(BaseModel):
    """The `configs/csb-bot.toml` file."""

    model_config = ConfigDict(extra="forbid")

    engine: EngineConfig = EngineConfig()
    notifier: NotifierConfig = NotifierConfig()
    policy: PolicyConfig = PolicyConfig()


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    slack_bot_token: SecretStr
    slack_signing_secret: SecretStr
    slack_app_token: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"
    csb_repo: Path = EXAMPLE_BENCH
    csb_database_url: str = f"sqlite+aiosqlite:///{DEFAULT_DATABASE}"
    csb_config: Path = DEFAULT_CONFIG
    csb_harbor: str = "harbor"

    @field_validator("csb_database_url")
    @classmethod
    def _sqlite_only(cls, url: str) -> str:
        """Claims and decisions rely on SQLite's write lock (BEGIN IMMEDIATE); another database would
        need row locks the store does not take, so it is refused rather than half supported."""
        try:
            driver = make_url(url).drivername
        except ArgumentError:
            raise ValueError("not a database URL; use sqlite:///path/to/file.db") from None
        if driver not in ("sqlite", "sqlite+aiosqlite"):
            raise ValueError(f"only SQLite is supported so far (sqlite:///path/to/file.db), not {driver}")
        return url

    def secret_values(self) -> list[str]:
        """Every secret setting's value, so text from outside (CSB's scripts) can be redacted."""
        values = [getattr(self, name) for name in type(self).model_fields]
        return [value.get_secret_value() for value in values if isinstance(value, SecretStr)]

    def resolved_repo(self) -> Path:
        return _from_root(self.csb_repo)

    def resolved_harbor(self) -> str:
        """A bare name is looked up on PATH; a relative path is taken from the project root, not the cwd."""
        if "/" not in self.csb_harbor:
            return self.csb_harbor
        return str(_from_root(Path(self.csb_harbor)))

    def resolved_config_path(self) -> Path:
        return _from_root(self.csb_config)

    def load_config(self) -> BotConfig:
        """Read the TOML file; a missing file means the defaults, a broken one is an InfraError."""
        path = self.resolved_config_path()
        if not path.exists():
            return BotConfig()
        try:
            return BotConfig.model_validate(tomllib.loads(path.read_text()))
        except (tomllib.TOMLDecodeError, ValidationError) as exc:
            raise InfraError(f"config file {path} is invalid: {_first_line(exc)}") from exc


def _from_root(path: Path) -> Path:
    return path if path.is_absolute() else PROJECT_ROOT / path


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def load_settings() -> Settings:
    """Settings from the environment; a missing token becomes one readable line, not a traceback."""
    try:
        return Settings()  # type: ignore[call-arg]
    except ValidationError as exc:
        missing = [str(err["loc"][0]).upper() for err in exc.errors() if err["type"] == "missing"]
        if missing:
            raise InfraError(f"missing environment variable(s): {', '.join(missing)}") from exc
        # Each problem by variable name and message only: the value may hold a password or token.
        problems = [f"{str(err['loc'][0]).upper()}: {err['msg']}" for err in exc.errors()]
        raise InfraError(f"invalid settings: {'; '.join(problems)}") from exc
