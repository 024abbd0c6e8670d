"""`/csb <subcommand>`: route the parsed text to one service call and queue the reply."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.csb.harbor_run import LaunchConfig
from bot.domain.command_line import (
    AUDIT_USAGE,
    OFFICIAL_USAGE,
    STATUS_USAGE,
    is_usage,
    parse_command,
    parse_run_line,
    usage_of,
)
from bot.domain.errors import UserInputError
from bot.domain.help_text import help_overview, run_help
from bot.domain.spec import Category
from bot.services.accounts import AccountService
from bot.services.compare import CompareService
from bot.services.compare_args import parse_compare_args, parse_runs_args
from bot.services.control_args import (
    parse_cancel_args,
    parse_drain_account_args,
    parse_rerun_args,
    parse_resume_args,
    parse_run_id,
    parse_undrain_account_args,
)
from bot.services.coverage import CoverageService
from bot.services.coverage_args import button_values, parse_coverage_args
from bot.services.promote_args import parse_promote_args
from bot.services.promotion import PromotionService
from bot.services.promotion_gate import PromotionGate
from bot.services.queries import QueryService, Viewer
from bot.services.reply_queue import ReplyService
from bot.services.requests import RunRequestService
from bot.services.run_control import RunControlService
from bot.services.spend import SpendService
from bot.slack.drawing import in_worker
from bot.slack.errors import answering, describe
from bot.slack.inbound.directory import Directory
from bot.slack.inbound.payloads import SlashCommand
from bot.slack.outbound.delivery import slack_error
from bot.slack.views.accounts import accounts_overview_text, drain_text
from bot.slack.views.charts import (
    Chart,
    comparison_chart,
    comparison_chart_csv,
    coverage_chart,
    coverage_chart_csv,
    spend_chart,
    spend_chart_csv,
)
from bot.slack.views.compare import chart_comment, chart_not_posted, compare_text, runs_text, side_name
from bot.slack.views.coverage import coverage_comment, coverage_text, waves_requested_text
from bot.slack.views.events import event_text
from bot.slack.views.promotion import official_text, promotion_text
from bot.slack.views.replies import (
    audit_text,
    checkout_values,
    hidden_audit_text,
    hidden_status_text,
    plan_text,
    status_text,
    suites_text,
)
from bot.slack.views.spend import spend_comment, spend_text
from bot.store.runs import request_id_of

log = logging.getLogger(__name__)

Handler = Callable[[SlashCommand, str], Awaitable[str | None]]


class CommandRouter:
    def __init__(
        self,
        requests: RunRequestService,
        queries: QueryService,
        replies: ReplyService,
        directory: Directory,
        *,
        launch: LaunchConfig,
        control: RunControlService,
        promotion: PromotionService,
        promotion_gate: PromotionGate,
        compare: CompareService,
        coverage: CoverageService,
        accounts: AccountService,
        spend: SpendService | None = None,
        client: AsyncWebClient | None = None,
    ) -> None:
        self._accounts_service = accounts
        self._requests = requests
        self._control = control
        self._promotion = promotion
        self._promotion_gate = promotion_gate
        self._directory = directory
        self._queries = queries
        self._replies = replies
        self._launch = launch
        self._compare = compare
        self._coverage = coverage
        self._spend = spend
        self._client = client  # uploads the comparison's chart in the channel
        self._handlers: dict[str, Handler] = {
            "help": self._help,
            "run": self._run,
            "suites": self._suites,
            "status": self._status,
            "audit": self._audit,
            "accounts": self._accounts,
            "drain-account": self._drain_account,
            "undrain-account": self._undrain_account,
            "cancel": self._cancel,
            "resume": self._resume,
            "rerun": self._rerun,
            "promote": self._promote,
            "official": self._official,
            "compare": self._compare_runs,
            "runs": self._runs,
            "coverage": self._coverage_of,
            "spend": self._spend_of,
        }

    async def handle(self, command: SlashCommand) -> None:
        """Never raises: every failure becomes an ephemeral reply (with a ref for unexpected ones)."""

        async def work() -> str | None:
            line = parse_command(command.text)
            handler = self._handlers[line.name]  # one for each of the grammar's SUBCOMMANDS
            return await handler(command, line.args)

        async def reply(text: str) -> None:
            await self._replies.ephemeral(command.response_url, text)

        async def when_busy(text: str) -> None:  # the outbox is in the same database: answer straight away
            log.warning("/csb by %s not done, database unavailable: %.80s", command.user_id, command.text)
            await self._replies.ephemeral(command.response_url, text, skip_outbox=True)

        await answering(work, reply, words=lambda exc: _words(exc, command.text), when_busy=when_busy)

    async def _help(self, _command: SlashCommand, args: str) -> str:
        if args.strip() != "run":
            return help_overview(self._handlers.keys())
        task_file, suites = await self._queries.suites()
        limits = {category: self._requests.parallel_range(category) for category in Category}
        return run_help(checkout_values(task_file, suites, await self._queries.full_configs(), limits))

    async def _run(self, command: SlashCommand, args: str) -> str | None:
        line = parse_run_line(args)
        params = line.params
        if line.tasks:  # a selection file of just those tasks, then as any `--selection-file` run
            actor = await self._directory.actor(command.user_id)
            params = await self._requests.named_tasks(params, line.tasks, actor, command.channel_id)
        spec = await self._requests.resolve(params)
        if params.dry_run:
            *first, last = plan_text(spec, await self._requests.preflight(spec), self._launch)
            for part in first:  # a plan too long for one reply comes in parts, in order
                await self._replies.ephemeral(command.response_url, part)
            return last
        await self._requests.submit(
            spec,
            actor=await self._directory.actor(command.user_id),
            channel_id=command.channel_id,
            response_url=command.response_url,
            trigger_id=command.trigger_id,
        )
        return None  # the card in the channel is the answer

    async def _suites(self, _command: SlashCommand, _args: str) -> str:
        task_file, suites = await self._queries.suites()
        return suites_text(task_file, suites)

    async def _status(self, command: SlashCommand, args: str) -> str | None:
        viewer = await self._viewer(command)
        if args.strip():
            run_id = _run_id(args, STATUS_USAGE)
            progress = await self._queries.run_progress(run_id, viewer)  # a clear error for no such run
            if not progress.visible:
                return hidden_status_text(progress)
            await self._replies.card_copy(command.response_url, request_id_of(run_id))
            return None
        return status_text(await self._queries.active_runs(viewer))

    async def _audit(self, command: SlashCommand, args: str) -> str:
        request_id = request_id_of(_run_id(args, AUDIT_USAGE))  # one number names both
        request, events = await self._queries.audit_trail(request_id, await self._viewer(command))
        if events is None:
            return hidden_audit_text(request_id, request.state.value)
        return audit_text(request_id, events)

    async def _viewer(self, command: SlashCommand) -> Viewer:
        return Viewer(actor=await self._directory.actor(command.user_id), channel_id=command.channel_id)

    async def _cancel(self, command: SlashCommand, args: str) -> str:
        parsed = parse_cancel_args(args)
        actor = await self._directory.actor(command.user_id)
        return event_text(await self._control.cancel(parsed.run_id, actor, parsed.reason, drain=parsed.drain))

    async def _resume(self, command: SlashCommand, args: str) -> str:
        run_id = parse_resume_args(args)
        return event_text(await self._control.resume(run_id, await self._directory.actor(command.user_id)))

    async def _rerun(self, command: SlashCommand, args: str) -> None:
        parsed = parse_rerun_args(args)
        await self._control.rerun(
            parsed.run_id,
            await self._directory.actor(command.user_id),
            only=parsed.only,
            channel_id=command.channel_id,
            response_url=command.response_url,
            trigger_id=command.trigger_id,
            causes=parsed.causes,
            invalid=parsed.invalid,
        )
        return None  # the new request's card in the channel is the answer

    async def _promote(self, command: SlashCommand, args: str) -> str | None:
        """A promotion card in the channel; `--dry-run` shows CSB's dry run to the asker only."""
        parsed = parse_promote_args(args)
        viewer = await self._viewer(command)
        if not parsed.dry_run:
            await self._promotion_gate.request(
                parsed.run_id, viewer, force=parsed.force, quarantine=parsed.quarantine
            )
            return None  # the card in the channel is the answer
        preview = await self._promotion.preview(parsed.run_id, viewer, force=parsed.force)
        *first, last = promotion_text(preview)
        for part in first:  # a long preview comes in parts, in order
            await self._replies.ephemeral(command.response_url, part)
        return last

    async def _official(self, command: SlashCommand, args: str) -> str:
        words = args.split()
        if len(words) > 1:
            raise UserInputError(f"expected at most one suite, got {len(words)} words", hint=OFFICIAL_USAGE)
        suite = words[0] if words else None
        *first, last = official_text(await self._promotion.official(suite), suite)
        for part in first:
            await self._replies.ephemeral(command.response_url, part)
        return last

    async def _accounts(self, _command: SlashCommand, args: str) -> str:
        if args.strip():
            raise UserInputError(f"`accounts` takes no arguments; got `{args.strip()[:40]}`")
        return accounts_overview_text(await self._accounts_service.overview())

    async def _drain_account(self, command: SlashCommand, args: str) -> str:
        parsed = parse_drain_account_args(args)
        actor = await self._directory.actor(command.user_id)
        return drain_text(await self._accounts_service.drain(parsed.name, actor, stop=parsed.stop))

    async def _undrain_account(self, command: SlashCommand, args: str) -> str:
        name = parse_undrain_account_args(args)
        return drain_text(
            await self._accounts_service.undrain(name, await self._directory.actor(command.user_id))
        )

    async def _compare_runs(self, command: SlashCommand, args: str) -> str | None:
        """The comparison as a reply, then its chart (drawn in the drawing process) in the channel."""
        result = await self._compare.compare(parse_compare_args(args), await self._viewer(command))
        await self._replies.ephemeral(command.response_url, compare_text(result))
        a, b = side_name(result.a), side_name(result.b)
        chart = await in_worker(comparison_chart, result, a, b)
        if chart is None:
            return None
        csv_file = ("comparison.csv", comparison_chart_csv(result))
        failed = await self._post_chart(
            command.channel_id, chart, csv_file, chart_comment(command.user_id, a, b)
        )
        return None if failed is None else chart_not_posted(failed)

    async def _post_chart(
        self, channel_id: str, chart: Chart, csv_file: tuple[str, str], comment: str
    ) -> str | None:
        """The chart and the CSV it is drawn from, in the channel; Slack's error when it refused them."""
        if self._client is None:
            return None
        name, content = csv_file
        try:
            await self._client.files_upload_v2(
                channel=channel_id,
                file_uploads=[
                    {
                        "file": chart.png,
                        "filename": chart.filename,
                        "title": chart.title,
                        "alt_txt": chart.alt_text,
                    },
                    {"content": content, "filename": name, "title": "Chart data"},
                ],
                initial_comment=comment,
            )
        except SlackApiError as exc:
            return slack_error(exc)[0]
        return None

    async def _runs(self, command: SlashCommand, args: str) -> str:
        return runs_text(await self._compare.runs(parse_runs_args(args), await self._viewer(command)))

    async def _coverage_of(self, command: SlashCommand, args: str) -> str | None:
        """The answer as a reply, then its chart (drawn in the drawing process) in the channel; with
        `--fill` or `--plan`, the requests made (their cards in the channel are the rest of the answer)."""
        parsed = parse_coverage_args(args)
        if parsed.fill or parsed.plan:
            made = await self._coverage.request_waves(
                parsed,
                await self._viewer(command),
                actor=await self._directory.actor(command.user_id),
                response_url=command.response_url,
                trigger_id=command.trigger_id,
            )
            return waves_requested_text(made)
        answer = await self._coverage.coverage(parsed, await self._viewer(command))
        for part in coverage_text(answer):  # a long answer comes in parts, in order
            await self._replies.ephemeral(command.response_url, part)
        await self._replies.coverage_buttons(
            command.response_url,
            button_values(parsed, fill=answer.has_gaps, plan=bool(answer.coverage.waves)),
        )
        chart = await in_worker(coverage_chart, answer.coverage)
        if chart is None:
            return None
        csv_file = ("coverage.csv", coverage_chart_csv(answer.coverage))
        failed = await self._post_chart(
            command.channel_id, chart, csv_file, coverage_comment(command.user_id)
        )
        return None if failed is None else chart_not_posted(failed, "coverage")

    async def _spend_of(self, command: SlashCommand, args: str) -> str | None:
        """The month's spend as a reply, then its chart and CSV in the channel, as coverage does."""
        if self._spend is None:
            raise UserInputError("spend is not available in this deployment")
        spend = await self._spend.month(args)
        for part in spend_text(spend, self._spend.budgets()):
            await self._replies.ephemeral(command.response_url, part)
        chart = await in_worker(spend_chart, spend)
        if chart is None:
            return None
        csv_file = (f"spend-{spend.month}.csv", spend_chart_csv(spend))
        failed = await self._post_chart(
            command.channel_id, chart, csv_file, spend_comment(command.user_id, spend.month)
        )
        return None if failed is None else chart_not_posted(failed, "spend")


def _words(exc: Exception, text: str) -> str:
    """`describe`, with the usage of the command that was typed under a person's mistake."""
    return describe(_with_own_usage(exc, text) if isinstance(exc, UserInputError) else exc)


def _with_own_usage(exc: UserInputError, text: str) -> UserInputError:
    """Every input error ends with the usage of the command that was typed, not of another one."""
    own = usage_of(text)
    hint = exc.hint or ""
    if hint == own:
        return exc
    if hint and not is_usage(hint):  # a how-to-fix hint stays, the usage follows it
        return UserInputError(f"{exc.message}\n{hint}", hint=own)
    return UserInputError(exc.message, hint=own)


def _run_id(args: str, usage: str) -> int:
    words = args.split()
    if len(words) > 1:
        raise UserInputError(f"expected one run number, got {len(words)} words", hint=usage)
    return parse_run_id(words[0] if words else "", usage)
