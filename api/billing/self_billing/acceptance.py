"""The distributor's acceptance or contest of each self-billed invoice, and an admin's resolution
of a contest (docs/self-billing.md "Documents by e-mail, acceptance and contest")."""

from __future__ import annotations

from api.access import BILLING_MANAGER, Route, roles
from api.operations import operation
from api.requests import acting_organization
from backend.billing.self_billing import acceptance, resolution
from backend.listing import ListParams
from schemas.billing.self_billing.acceptance import (
    AcceptanceOut,
    ContestedOut,
    ContestedQuery,
    ContestIn,
    ResolvedOut,
    ResolveIn,
)
from schemas.common import page_of

READERS = roles("distributor", kyb_required=True)
DECIDERS = roles("distributor", kyb_required=True, membership_roles=("manager", "billing"))
DELAY = ("The delay is 30 days after the invoice was e-mailed to the distributor (`deadline`), not after issue: an "
         "invoice never e-mailed has no deadline and is never tacitly accepted. ")


class Acceptance:
    @operation("A self-billed invoice's acceptance",
               description=DELAY + "For the distributor in whose name the invoice was issued (404 for another's). "
               "`status`: `pending`, `accepted`, `contested` (with `contest`, and its `resolution` once an admin "
               "decided), `tacitly_accepted`.",
               tags=("billing",), answer=AcceptanceOut, errors={404: "NOT_FOUND"})
    def on_get(self, req, resp, invoice_number: str) -> acceptance.AcceptanceView:
        return acceptance.acceptance_of(invoice_number=invoice_number,
                                        organization_id=acting_organization(req, "distributor"))

    @operation("Accept a self-billed invoice",
               description=DELAY + "The distributor's managers and billing members. 409 `CONFLICT` unless `pending` "
               "(`details.reason` `already_accepted`, `already_contested`, `already_tacitly_accepted`; "
               "`invoice_credited` once credited in full). Audited; "
               "logs `billing.supplier.self_billing.accepted`; under the reform, the platform sends 205 Approuvée "
               "for the invoice's flow. The payout may then go.",
               tags=("billing",), answer=AcceptanceOut, errors={404: "NOT_FOUND", 409: "CONFLICT"})
    def on_post_accept(self, req, resp, invoice_number: str) -> acceptance.AcceptanceView:
        return acceptance.accept(invoice_number=invoice_number, organization_id=acting_organization(req, "distributor"),
                                 user_id=req.context.principal.user_id)

    @operation("Contest a self-billed invoice",
               description=DELAY + "The distributor's managers and billing members; `reason` 1 to 2,000 characters "
               "(400). 409 `CONFLICT` after the deadline (`contestation_closed`) or unless `pending` (`already_*`). "
               "The payout of the reservation waits (409 `self_billing_contested`) until an admin resolves the "
               "contest. Audited; logs `billing.supplier.self_billing.contested`; under the reform, the platform "
               "sends 210 Refusée with the reason.",
               tags=("billing",), body=ContestIn, answer=AcceptanceOut, errors={404: "NOT_FOUND", 409: "CONFLICT"})
    def on_post_contest(self, req, resp, invoice_number: str, body: dict) -> acceptance.AcceptanceView:
        return acceptance.contest(invoice_number=invoice_number,
                                  organization_id=acting_organization(req, "distributor"),
                                  user_id=req.context.principal.user_id, reason=body["reason"])


class Contested:
    @operation("Contested self-billed invoices awaiting a resolution",
               description="`billing.manage.all`. Server-paginated; `search` on the invoice number or the "
               "distributor's organization id.", tags=("billing",), query=ContestedQuery,
               answer=page_of(ContestedOut))
    def on_get(self, req, resp, query: dict):
        return resolution.contested(ListParams.from_query(query))


class Resolve:
    def __init__(self, config) -> None:
        self.config = config

    @operation("Resolve the contest of a self-billed invoice",
               description="`billing.manage.all`. `reject`: the invoice stands, the distributor is told by e-mail "
               "with the note, the payout may go. `adjust`: a `supplier_credit_note` credits what is left of the "
               "contested invoice and a corrected self-billed invoice of `amountCents` (excluding tax, required) is "
               "issued, the next number of the distributor's series, both e-mailed; the corrected invoice starts "
               "its own 30 days. `amountCents` above the store share of what the customer paid is 409 `CONFLICT` "
               "(`details.reason` `amount_above_store_share`, `details.maximumCents`); no open contest is 409 "
               "(`no_open_contest`). Audited; logs `billing.supplier.self_billing.adjusted` or `.contest_rejected`.",
               tags=("billing",), body=ResolveIn, answer=ResolvedOut,
               errors={400: "VALIDATION_ERROR", 404: "NOT_FOUND", 409: "CONFLICT"})
    def on_post(self, req, resp, invoice_number: str, body: dict) -> resolution.Resolved:
        return resolution.resolve(invoice_number=invoice_number, decision=body["decision"], note=body["note"],
                                  amount_cents=body["amountCents"], user_id=req.context.principal.user_id,
                                  config=self.config)


def routes(deps) -> list[Route]:
    item = Acceptance()
    return [
        Route("/api/billing/self-billed/{invoice_number}/acceptance", item, READERS),
        Route("/api/billing/self-billed/{invoice_number}/accept", item, DECIDERS, suffix="accept"),
        Route("/api/billing/self-billed/{invoice_number}/contest", item, DECIDERS, suffix="contest"),
        Route("/api/admin/billing/self-billed/contested", Contested(), BILLING_MANAGER),
        Route("/api/admin/billing/self-billed/{invoice_number}/resolve", Resolve(deps.config), BILLING_MANAGER),
    ]
