"""Slack's Block Kit limits (api.slack.com/reference/block-kit), written once.

The views cut every text to the limit of the place it goes, and the playground's Slack stand-in refuses
what Slack would refuse, by these same numbers: a limit Slack changes is changed here, for both.
"""

from __future__ import annotations

MAX_MESSAGE_BLOCKS = 50
MAX_VIEW_BLOCKS = 100  # a modal or a home tab
MAX_MESSAGE_TEXT = 40_000
MAX_SECTION_TEXT = 3000
MAX_SECTION_FIELDS = 10
MAX_FIELD_TEXT = 2000
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_ACTIONS_ELEMENTS = 25
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_SELECT_OPTIONS = 100  # a static select's options
MAX_OPTION_TEXT = 75  # an option's text and description
MAX_OPTION_VALUE = 150
MAX_PLACEHOLDER = 150
MAX_URL = 3000
MAX_ID = 255
MAX_LABEL = 2000
MAX_VIEW_TITLE = 24
MAX_PRIVATE_METADATA = 3000
