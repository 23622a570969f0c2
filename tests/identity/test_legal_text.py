"""Legal names, addresses and signers' names: no control character, no leading formula character
(`backend.legal_text`), refused with 400 `VALIDATION_ERROR` naming the field; a value stored
before the rule is cleaned by its migration, which records the change."""

from __future__ import annotations

import importlib
import re

import pytest

from backend import legal_text
from backend.db import database
from tests.factories import make_organization, make_user, signed_in
from tests.identity.test_organizations import billing_body, manager_of

BAD = ["=HYPERLINK(\"http://x\",\"y\")", "+33 1", "-1", "@SUM(A1)", "\tTab", "Acme\r\nBcc: x", "Bell\x07"]


@pytest.mark.parametrize("value", BAD)
def test_an_organization_legal_name_that_would_run_or_break_a_line_is_refused(client, value):
    answer = client.simulate_post("/api/organizations", headers=signed_in(make_user()),
                                  json={"actorType": "industrial", "siren": "732829320", "legalName": value})
    assert answer.status_code == 400 and answer.json["error"]["code"] == "VALIDATION_ERROR"
    assert "legalName" in answer.json["error"]["details"]["fields"]


@pytest.mark.parametrize("path, value", [
    (("legalName",), "=1+1"), (("address", "street"), "1 rue\nde la Paix"), (("address", "city"), "-Paris"),
    (("address", "postalCode"), "@75002"), (("signer", "lastName"), "+Martin"),
])
def test_a_billing_profile_field_that_would_run_or_break_a_line_is_refused(client, path, value):
    user, organization = manager_of()
    body = billing_body(organization.siren)
    target = body
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    answer = client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", json=body,
                                 headers=signed_in(user))
    assert answer.status_code == 400 and answer.json["error"]["code"] == "VALIDATION_ERROR"
    fields = answer.json["error"]["details"]["fields"]
    for key in path:
        assert key in fields, fields
        fields = fields[key]


def test_ordinary_names_pass(client):
    user, organization = manager_of()
    body = billing_body(organization.siren, legalName="L'Atelier d'Émile & Fils - SARL")
    assert client.simulate_put(f"/api/organizations/{organization.id}/billing-profile", json=body,
                               headers=signed_in(user)).status_code == 200


class _Migrator:
    def __init__(self) -> None:
        self.statements: list[str] = []

    def sql(self, statement: str, *params) -> None:
        self.statements.append(statement)


@pytest.mark.owner  # the migration's own statements, as the owner runs them
def test_the_migration_cleans_what_was_stored_before_and_records_it():
    organization = make_organization(legal_name="=HYPERLINK(\"x\")\r\nSA")
    fine = make_organization(legal_name="Laiterie - SA")
    migrator = _Migrator()
    importlib.import_module("backend.migrations.187_legal_text_cleaned").migrate(migrator, database)
    for statement in migrator.statements[1:]:  # the table exists already
        database.execute_sql(statement.replace("%%", "%"))
    names = dict(database.execute_sql("SELECT id, legal_name FROM organization WHERE id IN (%s, %s)",
                                      (organization.id, fine.id)).fetchall())
    assert names == {organization.id: "HYPERLINK(\"x\")  SA", fine.id: "Laiterie - SA"}
    assert database.execute_sql(
        "SELECT before, after FROM legal_text_cleaning WHERE table_name = 'organization' AND row_id = %s",
        (organization.id,)).fetchall() == [("=HYPERLINK(\"x\")\r\nSA", "HYPERLINK(\"x\")  SA")]


@pytest.mark.parametrize("value", ["ACME SAS", "=HYPERLINK(1)", "a\x14b", "-x", "+33", "@x", "\tx", "Rue de l'Été",
                                   "x-y", "x\x7f"])
def test_the_documented_pattern_says_what_the_rule_says(value):
    assert (re.match(legal_text.PATTERN, value) is not None) == (legal_text.problem(value) is None)
