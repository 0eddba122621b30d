"""A source tool's observation is what the model reads, whatever the tool returned."""

from langchain_core.messages import ToolMessage
from langgraph.types import Command

from rescind.middleware.callbacks import tool_text

PAGE = "Acme bank account: GB33 BUKB 2020 1555 5555 55"


def test_a_plain_value_a_tool_message_and_content_blocks_give_the_text():
    """Strings pass as they are; messages and content blocks give their text."""
    assert tool_text(PAGE) == PAGE
    assert tool_text(ToolMessage(content=PAGE, tool_call_id="c1")) == PAGE
    assert tool_text(ToolMessage(content=[{"type": "text", "text": PAGE}], tool_call_id="c1")) \
        == PAGE


def test_a_command_gives_the_messages_it_carries_and_its_update_data_not_its_repr():
    """A tool that answers with Command(update={"messages": [...], ...}) was recorded as the
    Command's repr: the observation is the message the model will read, then the rest of the
    update (the state the graph will hold: ``user_info``), as JSON."""
    out = Command(update={"messages": [ToolMessage(content=PAGE, tool_call_id="c1")],
                          "vendor": "acme"})
    assert tool_text(out) == PAGE + '\n{"vendor": "acme"}'


def test_a_command_with_only_state_data_is_that_data():
    """Command(update={"user_info": {...}}) with no message: the observation is its data."""
    out = Command(update={"user_info": {"name": "Jane Roe", "account": "ACC-77120"}})
    assert tool_text(out) == '{"user_info": {"account": "ACC-77120", "name": "Jane Roe"}}'
