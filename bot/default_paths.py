"""Where the bot's files are by default, taken from the project root and not the current directory.

Plain path arithmetic with nothing else imported, so `csb-bot --help` can show these defaults without
loading the settings, the store or the Slack app (each costs a second of start-up).
"""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_BENCH = PROJECT_ROOT / "configs" / "example-bench"
EXAMPLE_HARBOR = EXAMPLE_BENCH / "bin" / "harbor"
DEFAULT_CONFIG = PROJECT_ROOT / "configs" / "csb-bot.toml"
DEFAULT_DATABASE = PROJECT_ROOT / ".csb-bot" / "csb-bot.db"
PLAYGROUND_CONFIG = PROJECT_ROOT / "configs" / "playground.toml"
PLAYGROUND_DATABASE = PROJECT_ROOT / ".csb-bot" / "playground.db"
