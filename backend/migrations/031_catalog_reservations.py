"""Marketplace: stores, ad spaces, campaigns, cart and reservations (double-booking excluded)."""


def migrate(migrator, database, fake=False, **kwargs):
    # The exclusion constraint against double-booking needs `=` on the ad space inside a GiST
    # index. btree_gist would give it on text, but the embedded PostgreSQL ships without that
    # extension; a range over text is GiST-indexable everywhere (built-in range_ops has `=`), so
    # the ad space id is wrapped as the one-point range [id, id].
    migrator.sql("CREATE TYPE textrange AS RANGE (subtype = text, collation = \"C\")")
    migrator.sql(
        """
        ALTER TABLE furniture_type_version
            ADD CONSTRAINT furniture_type_version_printer_organization_fkey
            FOREIGN KEY (printer_organization_id) REFERENCES organization (id) ON DELETE RESTRICT,
            ADD CONSTRAINT furniture_type_version_created_by_fkey
            FOREIGN KEY (created_by_user_id) REFERENCES app_user (id) ON DELETE SET NULL
        """
    )
    migrator.sql(
        """
        CREATE TABLE store (
            id              varchar(36) PRIMARY KEY,
            organization_id varchar(64) NOT NULL REFERENCES organization (id) ON DELETE RESTRICT,
            name            varchar(160) NOT NULL CHECK (btrim(name) <> ''),
            street          varchar(200) NOT NULL,
            postal_code     varchar(20) NOT NULL,
            city            varchar(120) NOT NULL,
            country         varchar(2) NOT NULL,
            created_at      timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql("CREATE INDEX store_organization ON store (organization_id, name)")
    migrator.sql("CREATE INDEX store_city ON store (lower(city))")
    migrator.sql(
        """
        CREATE TABLE ad_space (
            id                      varchar(36) PRIMARY KEY,
            store_id                varchar(36) NOT NULL REFERENCES store (id) ON DELETE RESTRICT,
            name                    varchar(160) NOT NULL CHECK (btrim(name) <> ''),
            promo_furniture_type_id varchar(36) NOT NULL REFERENCES furniture_type (id) ON DELETE RESTRICT,
            placement_universe_id   varchar(36) NOT NULL REFERENCES universe (id) ON DELETE RESTRICT,
            placement_rayon_id      varchar(36) REFERENCES rayon (id) ON DELETE RESTRICT,
            price_cents             integer NOT NULL CHECK (price_cents >= 0),
            created_at              timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    migrator.sql("CREATE INDEX ad_space_store ON ad_space (store_id)")
    migrator.sql("CREATE INDEX ad_space_universe ON ad_space (placement_universe_id, created_at)")
    migrator.sql("CREATE INDEX ad_space_rayon ON ad_space (placement_rayon_id, created_at)")
    migrator.sql(
        """
        CREATE TABLE campaign (
            id                 varchar(36) PRIMARY KEY,
            organization_id    varchar(64) NOT NULL REFERENCES organization (id) ON DELETE RESTRICT,
            name               varchar(160) NOT NULL CHECK (btrim(name) <> ''),
            starts_at          timestamptz NOT NULL,
            ends_at            timestamptz NOT NULL,
            universe_ids       text[] NOT NULL DEFAULT '{}',
            rayon_ids          text[] NOT NULL DEFAULT '{}',
            created_by_user_id varchar(36) REFERENCES app_user (id) ON DELETE SET NULL,
            created_at         timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT campaign_dates CHECK (ends_at > starts_at)
        )
        """
    )
    migrator.sql("CREATE INDEX campaign_organization ON campaign (organization_id, created_at)")
    # The store-zone deletion guard looks campaigns up by array membership.
    migrator.sql("CREATE INDEX campaign_universe_ids ON campaign USING gin (universe_ids)")
    migrator.sql("CREATE INDEX campaign_rayon_ids ON campaign USING gin (rayon_ids)")
    migrator.sql(
        """
        CREATE TABLE cart_item (
            id               varchar(36) PRIMARY KEY,
            organization_id  varchar(64) NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
            campaign_id      varchar(36) NOT NULL REFERENCES campaign (id) ON DELETE CASCADE,
            ad_space_id      varchar(36) NOT NULL REFERENCES ad_space (id) ON DELETE CASCADE,
            added_by_user_id varchar(36) REFERENCES app_user (id) ON DELETE SET NULL,
            created_at       timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT cart_item_key UNIQUE (campaign_id, ad_space_id)
        )
        """
    )
    migrator.sql("CREATE INDEX cart_item_organization ON cart_item (organization_id, created_at)")
    migrator.sql(
        """
        CREATE TABLE reservation (
            id                          varchar(36) PRIMARY KEY,
            industrial_organization_id  varchar(64) NOT NULL REFERENCES organization (id) ON DELETE RESTRICT,
            distributor_organization_id varchar(64) NOT NULL REFERENCES organization (id) ON DELETE RESTRICT,
            campaign_id                 varchar(36) NOT NULL REFERENCES campaign (id) ON DELETE RESTRICT,
            ad_space_id                 varchar(36) NOT NULL REFERENCES ad_space (id) ON DELETE RESTRICT,
            furniture_type_version_id   varchar(36) NOT NULL
                                        REFERENCES furniture_type_version (id) ON DELETE RESTRICT,
            starts_at                   timestamptz NOT NULL,
            ends_at                     timestamptz NOT NULL,
            status                      varchar(40) NOT NULL DEFAULT 'pending_review',
            billing_model               varchar(40),
            base_amount_cents           integer NOT NULL CHECK (base_amount_cents >= 0),
            commission_amount_cents     integer NOT NULL CHECK (commission_amount_cents >= 0),
            total_amount_cents          integer NOT NULL,
            commission_rate_bps         integer NOT NULL CHECK (commission_rate_bps BETWEEN 0 AND 10000),
            counter_price_cents         integer CHECK (counter_price_cents >= 0),
            review_note                 text,
            impression_status           varchar(40),
            created_by_user_id          varchar(36) REFERENCES app_user (id) ON DELETE SET NULL,
            created_at                  timestamptz NOT NULL DEFAULT now(),
            updated_at                  timestamptz NOT NULL DEFAULT now(),
            approved_at                 timestamptz,
            CONSTRAINT reservation_status CHECK (status IN
                ('pending_review', 'counter_proposed', 'approved', 'rejected', 'cancelled', 'completed')),
            CONSTRAINT reservation_dates CHECK (ends_at > starts_at),
            -- Specification C: gross = commission + net, also checked before every write.
            CONSTRAINT reservation_pricing CHECK (total_amount_cents = base_amount_cents + commission_amount_cents),
            CONSTRAINT reservation_counter_price CHECK (
                status <> 'counter_proposed' OR counter_price_cents IS NOT NULL),
            CONSTRAINT reservation_no_double_booking EXCLUDE USING gist (
                textrange(ad_space_id, ad_space_id, '[]') WITH =,
                tstzrange(starts_at, ends_at, '[)') WITH &&
            ) WHERE (status = 'approved')
        )
        """
    )
    migrator.sql(
        "CREATE INDEX reservation_industrial ON reservation (industrial_organization_id, created_at DESC)"
    )
    migrator.sql(
        "CREATE INDEX reservation_distributor ON reservation (distributor_organization_id, created_at DESC)"
    )
    migrator.sql("CREATE INDEX reservation_campaign ON reservation (campaign_id)")


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP TABLE reservation, cart_item, campaign, ad_space, store")
    migrator.sql("DROP TYPE textrange")
    migrator.sql(
        "ALTER TABLE furniture_type_version DROP CONSTRAINT furniture_type_version_printer_organization_fkey,"
        " DROP CONSTRAINT furniture_type_version_created_by_fkey"
    )
