"""Which tools are sources and which are actions: configuration kept outside agent code.

Loadable from TOML::

    tenant = "acme"
    url = "redis://127.0.0.1:6379"

    [sources.read_vendor_portal]
    source = "portal:{vendor}"      # formatted with the tool's arguments, each canonical
    kind = "vendor_portal"          # no domain: every portal is one trust domain

    [sources.read_mail]             # the sender is the attacker's choice: not a domain
    source = "email:{sender}"
    kind = "email"
    identity = {sender = "email"}   # how each argument is canonicalised (default: text)
    domain = "mail:{verified_domain}"   # a template over what the operator vouches for:
    vouched = ["verified_domain"]       # the run's configurable, set by the mail system

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
A source's name is canonical (``rescind.contract.identity``): each value is canonicalised by
its normaliser before the name is built, and the name as a whole after.

A trust domain is the operator's statement, never the model's or a sender's: ``domain`` is
fixed text or a template naming only ``vouched`` attributes (values of the run's
``configurable`` that the operator's own code sets, never the tool's arguments; one missing
at run time leaves its ``{name}`` as written: one domain for every such read). With no
``domain``, a source whose name is built from anything not vouched for (the model's
arguments, a sender) is one domain for the whole spec: its template, ``portal:{vendor}``.
"""

from __future__ import annotations

import re
import string
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rescind.contract import identity, layout, text
from rescind.contract.identity import Normaliser

from .spool import default_dir


class SourceTool(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="Source id template, formatted with the tool's arguments "
                        "and the run's config values")
    kind: str = Field("tool", description="The source's kind, kept on it (e.g. `web`, "
                      "`vendor_portal`)")
    identity: dict[str, Normaliser] = Field(
        default_factory=dict, description="How each argument of `source` is canonicalised "
        "before the name is built: `text` (the default: NFKC, case, white space, invisible "
        "characters), `host`, `email` or `iban`")
    domain: str | None = Field(None, description="Trust domain: fixed text, or a template "
                               "naming only `vouched` attributes; default: the source when its "
                               "name is fixed or built from vouched attributes only, else one "
                               "domain for the whole spec (its `source` template)")
    vouched: list[str] = Field(default_factory=list, description="Attributes the operator "
                               "vouches for (e.g. a sender domain the mail system verified): "
                               "names of the run's `configurable` values set by the operator's "
                               "code, never the tool's arguments; only these fill `domain`")

    @model_validator(mode="after")
    def _domain_names_vouched_attributes(self) -> SourceTool:
        """A domain template may name only what the operator vouches for: a tool's arguments
        are the model's (or a sender's) choice, and would make a domain per spelling."""
        if self.domain is not None:
            unvouched = sorted(fields(self.domain) - set(self.vouched))
            if unvouched:
                raise ValueError(
                    f"domain {self.domain!r} names {', '.join(unvouched)}, which is not vouched "
                    "for: a trust domain is the operator's statement, so its template may name "
                    "only attributes listed in `vouched` (the run's configurable values that "
                    "your own code sets), never the tool's arguments")
        unknown = sorted(set(self.identity) - fields(self.source))
        if unknown:
            raise ValueError(f"identity names {', '.join(unknown)}, which source "
                             f"{self.source!r} does not use")
        return self

    def name(self, values: dict) -> str:
        """The source's canonical name: each value the template uses canonicalised by its
        normaliser (``identity``, default ``text``), the name as a whole after."""
        used = fields(self.source)
        canonical = {k: identity.normalise(v, self.identity.get(k, "text")) if k in used else v
                     for k, v in values.items() if isinstance(k, str)}
        return identity.source_name(fill(self.source, canonical))

    def domain_of(self, run: dict | None = None) -> str | None:
        """The trust domain of a read, from the operator's statement alone: ``domain`` filled
        with the ``vouched`` values of the run's configurable (``run``; default: the current
        run's); None (the source itself) when the name is fixed or built from vouched values
        only; else the spec's one domain, its ``source`` template."""
        run = configurable() if run is None else run
        vouched = {k: run[k] for k in self.vouched if k in run}
        if self.domain is not None:
            return identity.source_name(_fill_known(self.domain, vouched))
        if fields(self.source) <= set(self.vouched):
            return None
        return identity.source_name(_fill_known(self.source, vouched))


ANONYMOUS = "user:anonymous"  # the user's source when nothing of the run fills its template


class UserSource(BaseModel):
    """The user's messages, as the model receives them, are observations of this source."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field("user:{user_id}", description="Source id template, formatted with the "
                        "run's config values and runtime context fields (set by the operator's "
                        "code); `user:anonymous` when they do not fill it (warned of when "
                        "several runs are at once)")
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
    amount_free: bool = Field(False, description="The operator declares that this action "
                              "moves no money: the gate judges it without an amount (any other "
                              "gated call with no amount is refused)")
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
                                "them (at run time every `configurable` value and runtime "
                                "context field fills templates)")
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


def fields(template: str) -> set[str]:
    """The names a template's replacement fields use (``{vendor}``, ``{a.b}`` -> ``a``)."""
    try:
        return {f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(template)
                if f}
    except ValueError:
        return set()


def _fill_known(template: str, values: dict) -> str:
    """``template`` with the fields ``values`` has filled and the others left as written."""
    out = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return template
    for literal, name, spec, conv in parsed:
        out.append(literal)
        if name is None:
            continue
        key = name.split(".")[0].split("[")[0]
        whole = "{" + name + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}"
        out.append(fill(whole, {key: values[key]}) if key in values else whole)
    return text.escape("".join(out), one_line=True)


def configurable() -> dict:
    """The current run's values set by the operator's code (``plain_values`` of its
    configurable), {} outside a run: where templates (``user:{user_id}``) and vouched
    attributes are read, never from a tool's call."""
    try:
        from langgraph.config import get_config

        conf = get_config().get("configurable", {})
    except (RuntimeError, ImportError):
        return {}
    return plain_values(conf)


def plain_values(conf: dict) -> dict:
    """The plain values (text and numbers) a run's ``configurable`` (``conf``) holds: its own
    (``user_id``, ``thread_id``...), and the fields of the run's runtime context (LangGraph
    1.x's ``graph.invoke(..., context=...)``, read by nodes through ``Runtime``, kept in the
    configurable under a private key), a ``configurable`` value winning over a context field
    of the same name."""
    out = context_values(conf.get(_RUNTIME))
    out.update((k, v) for k, v in conf.items()
               if isinstance(k, str) and not k.startswith("__") and isinstance(v, _PLAIN))
    return out


_RUNTIME = "__pregel_runtime"  # where LangGraph keeps a run's ``Runtime`` in its config
_PLAIN = (str, int, float)


def context_values(runtime: object) -> dict:
    """The plain fields (text and numbers) of a run's runtime context: a dataclass, a pydantic
    model, a dict (a TypedDict schema) or any object with attributes; {} with none."""
    context = getattr(runtime, "context", None)
    if context is None:
        return {}
    if isinstance(context, dict):
        fields_ = context
    else:
        fields_ = getattr(context, "__dict__", None)
        if fields_ is None:  # slots: a dataclass's declared fields
            names = getattr(context, "__dataclass_fields__", None) or ()
            fields_ = {n: getattr(context, n, None) for n in names}
    return {k: v for k, v in fields_.items()
            if isinstance(k, str) and not k.startswith("_") and isinstance(v, _PLAIN)
            and not isinstance(v, bool)}
