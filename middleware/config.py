"""Which tools are sources and which are actions: configuration kept outside agent code.

Loadable from TOML::

    tenant = "acme"
    url = "redis://127.0.0.1:6379"

    [sources.read_vendor_portal]
    source = "portal:{vendor}"      # formatted with the tool's arguments
    kind = "vendor_portal"
    domain = "portal:{vendor}"

    [actions.pay_invoice]
    amount = "amount"               # argument names
    payee = "vendor"

    [actions.schedule_payment]      # a pending payment: proposed now, run later
    id = "payment:{invoice}"
    stage = "propose"
    amount = "amount"

    [actions.release_payment]       # the gate judges the stored proposal, whatever the args say
    id = "payment:{invoice}"
    stage = "execute"

    [users]                         # the user's messages are a source (on by default)
    source = "user:{user_id}"       # formatted with the run's config values

Templates are formatted with the tool's arguments, then the values of the run's
``configurable`` (``user_id``, ``thread_id``...): a name that is neither stays as written.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rescind.contract import layout, text

from .spool import default_dir


class SourceTool(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="Source id template, formatted with the tool's arguments "
                        "and the run's config values")
    kind: str = Field("tool", description="The source's kind, kept on it (e.g. `web`, "
                      "`vendor_portal`)")
    domain: str | None = Field(None, description="Trust domain template; default: the source")


class UserSource(BaseModel):
    """The user's messages, as the model receives them, are observations of this source."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field("user:{user_id}", description="Source id template, formatted with the "
                        "run's config values; `user:anonymous` when they do not fill it")
    domain: str | None = Field(None, description="Trust domain template; default: the source")


class Receipt(BaseModel):
    """Where the tool's result says what was executed: each a regular expression whose first
    group is the value, searched in the result's text (a dict result as JSON)."""

    model_config = ConfigDict(extra="forbid")

    amount: str | None = Field(None, description="e.g. `Paid \\$([0-9,.]+)`")
    currency: str | None = Field(None, description="An ISO 4217 code")
    account: str | None = Field(None, description="The account paid")
    reference: str | None = Field(None, description="The bank's reference")
    value_date: str | None = Field(None, description="When it was paid")

    @field_validator("*")
    @classmethod
    def _one_group(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            groups = re.compile(value).groups
        except re.error as exc:  # a pydantic error naming the field, not a bare re.error
            raise ValueError(f"{value!r} is not a regular expression: {exc}") from None
        if groups < 1:
            raise ValueError(f"{value!r} needs a group: (...) around the value")
        return value


class ActionTool(BaseModel):
    model_config = ConfigDict(extra="forbid")

    amount: str | None = Field(None, description="Argument holding the amount")
    currency: str | None = Field(None, description="Argument holding the amount's currency "
                                 "(ISO 4217); a call without it is refused unless "
                                 "`default_currency` is set")
    default_currency: str | None = Field(None, pattern=r"^[A-Z]{3}$", description="The "
                                         "currency of the amount when no argument names it "
                                         "(none: the gate's own)")
    payee: str | None = Field(None, description="Argument holding the payee")
    account: str | None = Field(None, description="Argument holding the account")
    id: str | None = Field(None, description="Action name template, e.g. 'payment:{invoice}'; "
                           "default: the tool call's id")
    stage: Literal["both", "propose", "execute"] = Field(
        "both", description="both: propose, ask the gate, run (a payment now); propose: record a "
        "pending action, not gated (a scheduled payment); execute: ask the gate about the "
        "earlier proposal named by `id`, then run it (releasing a scheduled payment)")
    receipt: Receipt | None = Field(None, description="What the tool's result says was "
                                    "executed (amount, account, date, reference): a recall "
                                    "asks for that back; the result's text is kept either way")


class InterceptConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tenant: str = Field(pattern=rf"^{layout.TENANT_RE.pattern}$", description="Whose graph "
                        "the events go to; operators name it with `--tenant`")
    url: str = Field("redis://127.0.0.1:6379", description="The FalkorDB server (a Redis URL): "
                     "its streams carry the events, the gate and the OUT statuses")
    partitions: int = Field(layout.PARTITIONS, ge=1, description="Event streams; the same "
                            "number as the workers' (RESCIND_PARTITIONS)")
    sources: dict[str, SourceTool] = Field(default_factory=dict, description="Source tools, by "
                                           "tool name: each result is an observation")
    actions: dict[str, ActionTool] = Field(default_factory=dict, description="Action tools, by "
                                           "tool name: recorded, and gated by `stage`, before "
                                           "they run")
    users: UserSource | None = Field(default_factory=UserSource, description="How the user's "
                                     "messages become a source; `false` (None from Python) "
                                     "records none")
    run_keys: list[str] = Field(["user_id", "thread_id", "assistant_id"], description="Names "
                                "of the run's `configurable` values that templates may use "
                                "besides the tool's arguments: the check at wrap time accepts "
                                "them (at run time every `configurable` value fills templates)")
    gate_timeout_s: float = Field(5.0, description="No answer in time: the action does not run")
    spool_dir: Path = Field(default_factory=default_dir, description="Where events wait on "
                            "local disk until their stream has them, one folder per tenant; "
                            "default: $RESCIND_SPOOL_DIR, else ~/.cache/rescind/spool")
    spool_max_bytes: int = Field(512 * 2**20, gt=0, description="Bound of a tenant's spool "
                                 "held by one process; beyond it the oldest events are dropped")
    exit_flush_s: float = Field(2.0, ge=0, description="At interpreter exit, how long to try "
                                "sending what is queued; the rest stays in the spool")
    strict: bool = Field(False, description="A configuration problem found when the graph is "
                         "wrapped (a tool not in the graph, a template naming an argument the "
                         "tool does not take) is an error, not a warning")

    @field_validator("users", mode="before")
    @classmethod
    def _users_off(cls, value: object) -> object:
        """``users = false`` in TOML, which has no null, turns user messages off."""
        return None if value is False else value

    @classmethod
    def load(cls, path: str | Path) -> InterceptConfig:
        return cls.model_validate(tomllib.loads(Path(path).read_text(encoding="utf-8")))


def fill(template: str, values: dict, default: str | None = None) -> str:
    """A template such as ``portal:{vendor}`` with ``values``; when a name is missing, the
    template as written (or ``default``). It names something (a source, an action): a control
    character in the values is written as an escape (``rescind.contract.text``)."""
    try:
        filled = template.format(**{k: v for k, v in values.items() if isinstance(k, str)})
    except (KeyError, IndexError, ValueError, AttributeError):
        return template if default is None else default
    return text.escape(filled, one_line=True)
