"""The Web API methods the stand-in answers; anything else is `unknown_method`, as in Slack."""

from __future__ import annotations

from bot.playground.api_context import Handler
from bot.playground.methods_chat import chat_delete, chat_post_ephemeral, chat_post_message, chat_update
from bot.playground.methods_files import files_complete_upload_external, files_get_upload_url_external
from bot.playground.methods_read import (
    auth_test,
    conversations_history,
    conversations_open,
    conversations_replies,
    usergroups_list,
    users_info,
)
from bot.playground.methods_views import views_open, views_publish, views_update

METHODS: dict[str, Handler] = {
    "auth.test": auth_test,
    "chat.delete": chat_delete,
    "chat.postEphemeral": chat_post_ephemeral,
    "chat.postMessage": chat_post_message,
    "chat.update": chat_update,
    "conversations.history": conversations_history,
    "files.completeUploadExternal": files_complete_upload_external,
    "files.getUploadURLExternal": files_get_upload_url_external,
    "conversations.open": conversations_open,
    "conversations.replies": conversations_replies,
    "usergroups.list": usergroups_list,
    "users.info": users_info,
    "views.open": views_open,
    "views.publish": views_publish,
    "views.update": views_update,
}
