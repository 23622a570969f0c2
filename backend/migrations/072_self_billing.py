"""Self-billing (Specification C): the distributor's self-billing mandate and reservation incidents.

What the database guarantees:
- at most one active mandate (`pending_signature` or `signed`) per organization, and one mandate
  per e-signature request reference;
- each state carries its dates (`signed` has `signed_at`, `declined` its `declined_at`, `revoked`
  its `revoked_at` and reason);
- at most one `open` incident per reservation; a released incident has its resolution note;
- a reservation is self-billed at most once (one `supplier_self_billed` invoice per reservation)
  and paid out at most once (one live `supplier_payout` payment order per reservation).
"""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE TABLE billing_self_billing_mandate (
            id                   varchar(36) PRIMARY KEY,
            organization_id      varchar(64) NOT NULL REFERENCES organization (id) ON DELETE RESTRICT,
            status               varchar(40) NOT NULL DEFAULT 'draft'
                                 CHECK (status IN ('draft', 'pending_signature', 'signed', 'declined', 'revoked')),
            signature_level      varchar(40) NOT NULL DEFAULT 'electronic_signature',
            esign_request_ref    varchar(255) UNIQUE,
            signer               jsonb NOT NULL DEFAULT '{}'::jsonb,
            document_storage_key text,
            requested_by_user_id varchar(36),
            requested_at         timestamptz,
            signed_at            timestamptz,
            declined_at          timestamptz,
            decline_reason       text,
            revoked_at           timestamptz,
            revoked_by_user_id   varchar(36),
            revoke_reason        text,
            created_at           timestamptz NOT NULL DEFAULT now(),
            updated_at           timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT billing_self_billing_mandate_sent CHECK (
                status = 'draft' OR (esign_request_ref IS NOT NULL AND requested_at IS NOT NULL)),
            CONSTRAINT billing_self_billing_mandate_signed CHECK (
                status NOT IN ('signed', 'revoked') OR signed_at IS NOT NULL),
            CONSTRAINT billing_self_billing_mandate_declined CHECK (
                (status = 'declined') = (declined_at IS NOT NULL)),
            CONSTRAINT billing_self_billing_mandate_revoked CHECK (
                (status = 'revoked') = (revoked_at IS NOT NULL AND revoke_reason IS NOT NULL))
        )
        """
    )
    migrator.sql(
        "CREATE UNIQUE INDEX billing_self_billing_mandate_one_active ON billing_self_billing_mandate"
        " (organization_id) WHERE status IN ('pending_signature', 'signed')"
    )
    migrator.sql(
        "CREATE INDEX billing_self_billing_mandate_organization ON billing_self_billing_mandate"
        " (organization_id, created_at DESC)"
    )
    migrator.sql(
        """
        CREATE TABLE billing_reservation_incident (
            id                   varchar(36) PRIMARY KEY,
            reservation_id       varchar(36) NOT NULL REFERENCES reservation (id) ON DELETE RESTRICT,
            organization_id      varchar(64) NOT NULL REFERENCES organization (id) ON DELETE RESTRICT,
            status               varchar(40) NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'released')),
            reason               text NOT NULL CHECK (btrim(reason) <> ''),
            declared_by_user_id  varchar(36) NOT NULL,
            declared_at          timestamptz NOT NULL,
            resolution_note      text,
            released_by_user_id  varchar(36),
            released_at          timestamptz,
            created_at           timestamptz NOT NULL DEFAULT now(),
            updated_at           timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT billing_reservation_incident_released CHECK (
                (status = 'released') = (released_at IS NOT NULL AND resolution_note IS NOT NULL
                                         AND btrim(resolution_note) <> ''))
        )
        """
    )
    migrator.sql(
        "CREATE UNIQUE INDEX billing_reservation_incident_one_open ON billing_reservation_incident"
        " (reservation_id) WHERE status = 'open'"
    )
    migrator.sql(
        "CREATE INDEX billing_reservation_incident_status ON billing_reservation_incident"
        " (status, declared_at DESC, id)"
    )
    migrator.sql(
        "CREATE INDEX billing_reservation_incident_reservation ON billing_reservation_incident"
        " (reservation_id, declared_at DESC)"
    )
    migrator.sql(
        "CREATE UNIQUE INDEX billing_invoice_one_self_billed ON billing_invoice (reservation_id)"
        " WHERE kind = 'supplier_self_billed'"
    )
    migrator.sql(
        "CREATE UNIQUE INDEX billing_payment_order_one_payout ON billing_payment_order (reservation_id)"
        " WHERE kind = 'supplier_payout' AND status NOT IN ('failed', 'cancelled')"
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP INDEX billing_payment_order_one_payout, billing_invoice_one_self_billed")
    migrator.sql("DROP TABLE billing_reservation_incident, billing_self_billing_mandate")
