"""Every executor by its kind: the one place that names them all.

An executor enters as one module (the executor, its settings section, its `check` hook) and one
`Registration` here; the engine's factory, the settings and `csb-bot check` go through this table and
never ask which kind they have.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

from pydantic import Field, TypeAdapter

from bot.executors.base import Executor, ExecutorContext, ExecutorSettings, Probe
from bot.executors.local import LocalExecutor, LocalSettings, check_local
from bot.executors.ray_settings import RaySettings

_S = TypeVar("_S", bound=ExecutorSettings)


@dataclass(frozen=True)
class Registration(Generic[_S]):
    """What the rest of the bot needs of one kind of executor."""

    settings: type[_S]
    build: Callable[[_S, ExecutorContext], Executor]
    check: Callable[[_S], Awaitable[list[Probe]]]


def _ray_executor(settings: RaySettings, context: ExecutorContext) -> Executor:
    # The Ray executor and its Jobs client load when a deployment chooses Ray, not at every start of
    # one that runs lanes locally (its settings load always: they are part of every settings file's shape).
    from bot.executors.ray import RayExecutor

    return RayExecutor.for_cluster(settings, context)


async def _check_ray(settings: RaySettings) -> list[Probe]:
    from bot.executors.ray_check import check_ray  # see `_ray_executor`

    return await check_ray(settings)


# The settings of any executor, told apart by `kind`.
AnyExecutorSettings = Annotated[LocalSettings | RaySettings, Field(discriminator="kind")]

EXECUTORS: Mapping[str, Registration[Any]] = {
    "local": Registration(LocalSettings, LocalExecutor.for_host, check_local),
    "ray": Registration(RaySettings, _ray_executor, _check_ray),
}
_ANY_SETTINGS: TypeAdapter[ExecutorSettings] = TypeAdapter(AnyExecutorSettings)
LOCAL = LocalSettings()


def executor_settings(values: Mapping[str, Any]) -> ExecutorSettings:
    """One executor's settings from plain values, `kind` among them (pydantic's errors if invalid)."""
    return _ANY_SETTINGS.validate_python(dict(values))


def build_executor(settings: ExecutorSettings, context: ExecutorContext) -> Executor:
    return EXECUTORS[settings.kind].build(settings, context)


async def check_executor(settings: ExecutorSettings) -> list[Probe]:
    """What `csb-bot check` finds of where lanes run, one probe per thing looked at."""
    return await EXECUTORS[settings.kind].check(settings)


def environment_variables() -> dict[str, tuple[str, str]]:
    """Every executor's environment variable → (its kind, the settings field it sets)."""
    return {
        variable: (kind, field)
        for kind, registration in EXECUTORS.items()
        for field, variable in registration.settings.ENV.items()
    }
