"""A source spec names its sources canonically and takes its trust domain from the operator
alone: the model's arguments and a sender's claims never make a domain."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rescind.middleware import InterceptConfig, SourceTool

PORTAL = SourceTool(source="portal:{vendor}", kind="vendor_portal")
MAIL = SourceTool(source="email:{sender}", kind="email", identity={"sender": "email"},
                  domain="mail:{verified_domain}", vouched=["verified_domain"])


@pytest.mark.parametrize("vendor", ["northwind", "Northwind", " northwind", "ｎｏｒｔｈｗｉｎｄ",
                                    "north\u200bwind", "NORTH\u00adWIND\t"])
def test_every_spelling_of_an_argument_builds_one_name(vendor):
    """Each argument is canonicalised before the template is filled."""
    assert PORTAL.name({"vendor": vendor}) == "portal:northwind"


def test_each_argument_has_its_normaliser():
    """``identity`` picks a normaliser per argument: an address, a host, an IBAN."""
    assert MAIL.name({"sender": "Northwind Billing <Billing@Northwind.COM.>"}) == \
        "email:billing@northwind.com"
    web = SourceTool(source="web:{url}", identity={"url": "host"})
    assert web.name({"url": "https://Bücher.example:443/a"}) == "web:xn--bcher-kva.example"
    acct = SourceTool(source="bank:{iban}", identity={"iban": "iban"})
    assert acct.name({"iban": "IBAN ＧＢ３３ BUKB 2020"}) == acct.name({"iban": "gb33bukb2020"})


def test_a_spec_built_from_the_model_s_arguments_is_one_domain():
    """No domain declared and a name from the tool's arguments: one domain for the whole spec
    (its template), whatever the arguments, even with the run's values at hand."""
    assert PORTAL.domain_of({}) == "portal:{vendor}"
    assert PORTAL.domain_of({"vendor": "northwind"}) == "portal:{vendor}"
    sender = SourceTool(source="email:{sender}", kind="email")
    assert sender.domain_of({"sender": "a@b.com"}) == "email:{sender}"


def test_a_fixed_name_or_one_from_vouched_values_is_its_own_domain():
    """A fixed source, or one built only from what the operator vouches for: the source."""
    assert SourceTool(source="erp").domain_of({}) is None
    assert SourceTool(source="crm:{tenant}", vouched=["tenant"]).domain_of({}) is None


def test_a_declared_domain_is_filled_only_from_vouched_run_values():
    """Fixed text as written; a template with the run's vouched value; with none in the run,
    the template as written (every unverified read shares one domain)."""
    assert SourceTool(source="contract:{v}", domain="Signed-Contracts").domain_of({}) == \
        "signed-contracts"
    assert MAIL.domain_of({"verified_domain": "Northwind.com"}) == "mail:northwind.com"
    assert MAIL.domain_of({}) == "mail:{verified_domain}"
    assert MAIL.domain_of({"sender": "x@evil.com"}) == "mail:{verified_domain}"


def test_a_domain_naming_what_the_operator_does_not_vouch_for_is_refused():
    """``domain = "{sender}"`` would let a sender choose its domain: refused when the
    configuration is read, naming the field; so is a normaliser for an unused argument."""
    with pytest.raises(ValidationError, match="names sender, which is not vouched for"):
        SourceTool(source="email:{sender}", kind="email", domain="{sender}")
    with pytest.raises(ValidationError, match="identity names url"):
        SourceTool(source="portal:{vendor}", identity={"url": "host"})
    with pytest.raises(ValidationError):
        SourceTool(source="portal:{vendor}", identity={"vendor": "phone"})


def test_identity_and_vouched_load_from_toml(tmp_path):
    """The TOML spelling of a mail source with an address normaliser and a vouched domain."""
    path = tmp_path / "rescind.toml"
    path.write_text('tenant = "shop"\n[sources.read_mail]\nsource = "email:{sender}"\n'
                    'kind = "email"\nidentity = {sender = "email"}\n'
                    'domain = "mail:{verified_domain}"\nvouched = ["verified_domain"]\n')
    assert InterceptConfig.load(path).sources["read_mail"] == MAIL
