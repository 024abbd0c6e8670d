"""Harbor's trial-folder rule, as observed in CSB's results: `<task folder name, cut to 32>__<7 random>`."""

from __future__ import annotations

from bot.csb.trials import (
    HARBOR_NAME_LIMIT,
    is_trial_folder,
    is_trial_of,
    short_task_name,
    trial_task_part,
    trial_task_parts,
)

# Names seen in CSB's own results (a trial result and a job-level result of CSB's fixtures).
SEEN = ["ansible-abc-imports-fix-001__D9CcXfP", "protonmail-conv-testhooks-fix-00__qVtzw6L"]
LONG_TASK = "protonmail-conv-testhooks-fix-001"  # 33 characters: its trials carry 32 of them


def test_trial_folders_are_told_from_job_folders_and_other_names() -> None:
    assert all(is_trial_folder(name) for name in SEEN)
    not_trials = [
        "2026-02-23__13-03-01",
        "csb_r1_l2_a1",
        "task__abc123",
        "task__abc12345",
        "__D9CcXfP",
        "t__D9C-XfP",
    ]
    assert not any(is_trial_folder(name) for name in not_trials)


def test_the_task_part_is_everything_before_the_last_id() -> None:
    assert trial_task_part(SEEN[0]) == "ansible-abc-imports-fix-001"
    assert trial_task_part("a__b__D9CcXfP") == "a__b"
    assert trial_task_part("2026-02-23__13-03-01") is None


def test_harbor_keeps_32_characters_and_newer_harbor_strips_the_separator_at_the_cut() -> None:
    assert HARBOR_NAME_LIMIT == 32 and len(LONG_TASK) == 33
    assert trial_task_parts(LONG_TASK) == {LONG_TASK, LONG_TASK[:32]}
    cut_at_dash = "x" * 31 + "-tail"
    assert trial_task_parts(cut_at_dash) == {cut_at_dash, "x" * 31 + "-", "x" * 31}
    assert short_task_name(cut_at_dash) == "x" * 31 == short_task_name("x" * 31 + "_")
    assert is_trial_of(SEEN[1], LONG_TASK)
    assert is_trial_of(f"{'x' * 31}__AbC1234", cut_at_dash) and is_trial_of(
        f"{cut_at_dash}__AbC1234", cut_at_dash
    )
    assert not is_trial_of(SEEN[0], LONG_TASK) and not is_trial_of(f"{LONG_TASK}__short", LONG_TASK)
