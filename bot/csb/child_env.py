"""The one home of the rule for what a child process of the bot may see of its environment.

Every process the bot starts (a lane's Harbor, locally or as a Ray job's `runtime_env.env_vars`; CSB's
preflight and after-batch scripts; `.env.local` sourced; `check`'s Harbor probes) is given a `ChildEnv`,
and a `ChildEnv` is made only here, from an allow-list: the variables CSB's harness lets reach Harbor and
the agent (it is a shell script, so a lane inherits the operator's shell: locale, PATH, temp folders,
proxies and certificates, and the Docker, Daytona, Anthropic, Claude, Sourcegraph and Harbor variables).
The bot's own settings are never on it: `CSB_*` holds the database URL with its password and the Ray
token, `SLACK_*` the Slack secrets. An operator adds names or prefixes in the policy file's `[child_env]`
section; the bot's own names are refused there, so no list can let them through.

Built from an allow-list rather than by removing what is known to be secret: a setting added later, or
a secret under a name nobody thought of, stays in the bot.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from pydantic import BaseModel, ConfigDict, field_validator

# The bot's own settings and secrets: never given to a child, and refused on the allow-list.
BOT_OWN_PREFIXES = ("CSB_", "SLACK_")

# What a lane needs of the operator's environment, as CSB's harness would pass it (csb/HARNESS.md §2).
ALLOWED_NAMES = frozenset(
    {
        "PATH",
        "HOME",  # the bot's own; a lane gets its account's home instead
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "TZ",
        "TMPDIR",
        "TMP",
        "TEMP",
        "PYTHONPATH",  # the harness prepends the checkout to it
        "VIRTUAL_ENV",
        "DEBUG_MODE",
        "USE_SUBSCRIPTION",
        "GITHUB_TOKEN",  # CSB's github_remote config and Daytona's compose build
        "NODE_EXTRA_CA_CERTS",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
    }
)
ALLOWED_PREFIXES = (
    "LC_",
    "XDG_",
    "DOCKER_",
    "BUILDKIT_",
    "DAYTONA_",
    "ANTHROPIC_",
    "CLAUDE_",
    "SOURCEGRAPH_",
    "SRC_",  # the agent's fallbacks for the Sourcegraph token and URL
    "AUGMENT_",  # CSB's augment_* configs
    "HARBOR_",
    "LITELLM_",  # Harbor prices trials through LiteLLM: LITELLM_LOCAL_MODEL_COST_MAP keeps an offline host
    # from waiting on its retries to fetch the price list
)


def is_bot_own(name: str) -> bool:
    """One of the bot's own settings (any case: the settings read `csb_database_url` too)."""
    return name.upper().startswith(BOT_OWN_PREFIXES)


class ChildEnvConfig(BaseModel):
    """The `[child_env]` section: more names, or prefixes written `NAME_*`, that child processes get."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    allow: tuple[str, ...] = ()

    @field_validator("allow")
    @classmethod
    def _never_the_bots_own(cls, entries: tuple[str, ...]) -> tuple[str, ...]:
        for entry in entries:
            stem = entry.removesuffix("*")
            if not stem or not stem.replace("_", "").isalnum() or "*" in stem:
                raise ValueError(f"{entry!r} is not a variable name or a prefix written NAME_*")
            covers_own = entry.endswith("*") and any(own.startswith(stem.upper()) for own in BOT_OWN_PREFIXES)
            if is_bot_own(stem) or covers_own:
                raise ValueError(
                    f"{entry!r} would give child processes the bot's own settings (CSB_*, SLACK_*: "
                    "the database URL, the Ray token, the Slack secrets); they never leave the bot"
                )
        return entries

    def allows(self, name: str) -> bool:
        if name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES):
            return True
        return any(name.startswith(e[:-1]) if e.endswith("*") else name == e for e in self.allow)


class ChildEnv(Mapping[str, str]):
    """An environment a child process may be given: the allow-listed part of the bot's environment (read
    when the child starts, as a shell's children see its current exports), plus what the bot sets itself
    (a lane's HOME, its marker). Made only by `child_environ`; extended only by `with_vars`."""

    __slots__ = ("_allowed", "_dropped", "_own", "_source")

    def __init__(
        self,
        source: Mapping[str, str],
        allowed: ChildEnvConfig,
        own: Mapping[str, str],
        dropped: frozenset[str],
        *,
        _made_here: bool = False,
    ) -> None:
        if not _made_here:
            raise TypeError("a ChildEnv is made by child_environ(), from the allow-list")
        self._source, self._allowed, self._own, self._dropped = source, allowed, dict(own), dropped

    def __getitem__(self, name: str) -> str:
        if name in self._own:
            return self._own[name]
        if name in self._dropped or not self._allowed.allows(name):
            raise KeyError(name)
        return self._source[name]

    def __iter__(self) -> Iterator[str]:
        inherited = [name for name in self._source if name not in self._own and name not in self._dropped]
        yield from (name for name in inherited if self._allowed.allows(name))
        yield from self._own

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:  # names only: values may be tokens
        return f"ChildEnv({sorted(self)})"

    def with_vars(self, variables: Mapping[str, str] | None = None, *, drop: Iterable[str] = ()) -> ChildEnv:
        """This environment with the bot's own choices set, then `drop` removed."""
        own = {**self._own, **(variables or {})}
        gone = frozenset(drop)
        for name in gone:
            own.pop(name, None)
        dropped = (self._dropped - own.keys()) | gone
        return ChildEnv(self._source, self._allowed, own, dropped, _made_here=True)


def child_environ(environ: Mapping[str, str], config: ChildEnvConfig | None = None) -> ChildEnv:
    """The allow-listed part of `environ` (the bot's own environment)."""
    return ChildEnv(environ, config or ChildEnvConfig(), {}, frozenset(), _made_here=True)


def spawn_env(env: ChildEnv) -> dict[str, str]:
    """What `env=` (or a Ray job's env_vars) receives: only ever a `ChildEnv`, checked when it is spawned."""
    if not isinstance(env, ChildEnv):
        raise TypeError(f"a child process is given a ChildEnv (bot.csb.child_env), not {type(env).__name__}")
    return dict(env)
